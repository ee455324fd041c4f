#include "function1d/observation_suggester.h"

#include <cmath>

#include <torch/torch.h>

#include "common/model_list.h"
#include "common/prediction_service.h"
#include "function1d/function_plot.h"
#include "function1d/suggestion_box.h"
#include "npe/data/function_scene.h"

namespace npe::widgets {

ObservationSuggester::ObservationSuggester(FunctionPlot* plot, PredictionService* service,
                                           const ModelList* models, SuggestionBox* box,
                                           std::function<FunctionScene()> scene, QObject* parent)
    : QObject(parent),
      m_plot(plot),
      m_service(service),
      m_models(models),
      m_box(box),
      m_scene(std::move(scene)) {
  connect(m_service, &PredictionService::placementReady, this, &ObservationSuggester::onPlacement);
  connect(m_service, &PredictionService::placementProgress, this,
          [this](uint64_t serial, qint64 done, qint64 total) {
            if (serial == m_serial) m_box->showProgress(done, total);
          });
  connect(m_box, &SuggestionBox::settingsChanged, this, &ObservationSuggester::refresh);
  connect(m_box, &SuggestionBox::addRequested, this, [this] {
    if (m_proposal) Q_EMIT addRequested(*m_proposal);
  });
}

void ObservationSuggester::refresh() {
  const auto id = m_box->model();
  const auto* entry = id.isEmpty() ? nullptr : m_models->find(id);
  if (!entry || !entry->predictor) {
    m_answered = ++m_serial;  // a placement still running is not drawn
    m_proposal.reset();
    m_plot->clearAcquisition();
    m_box->showProgress(0, 0);
    m_box->showProposal(id.isEmpty() ? QString() : tr("the model is not loaded"), false);
    return;
  }
  const auto range = m_plot->xAxis->range();
  FunctionScene scene = m_scene();
  scene.held_out_x.clear();  // no metrics here
  scene.held_out_y.clear();
  scene.query_low = range.lower;
  scene.query_high = range.upper;
  scene.num_queries = kTargets;
  PlacementRequest request;
  request.serial = ++m_serial;
  request.model = *entry;
  request.score = m_box->score();
  request.count = 1;
  try {
    request.batch = scene_task(scene).batch;
  } catch (const std::exception& e) {
    m_answered = m_serial;
    m_box->showProposal(QString::fromStdString(e.what()), false);
    return;
  }
  request.candidates =
      torch::linspace(range.lower, range.upper, kCandidates, torch::kFloat64).unsqueeze(1);
  m_plot->setAcquisitionStale(true);
  m_service->request_placement(std::move(request));
}

void ObservationSuggester::onPlacement(const PlacementResult& result) {
  if (result.serial != m_serial) return;  // superseded
  m_box->showProgress(0, 0);
  if (result.cancelled) return;
  m_answered = result.serial;
  const auto* entry = m_models->find(result.model_id);
  if (!result.error.isEmpty() || !entry || result.chosen.empty()) {
    m_proposal.reset();
    m_plot->clearAcquisition();
    m_box->showProposal(
        result.error.isEmpty() ? tr("no proposal") : tr("error: %1").arg(result.error), false);
    Q_EMIT answered();
    return;
  }
  const auto scores = result.scores.contiguous();
  const auto xs = result.candidates.select(1, 0).to(torch::kFloat64).contiguous();
  QVector<double> x(xs.data_ptr<double>(), xs.data_ptr<double>() + xs.numel());
  QVector<double> score(scores.data_ptr<double>(), scores.data_ptr<double>() + scores.numel());
  // A variance reduction below zero is rounding (observing never adds uncertainty for a GP).
  for (double& s : score) s = std::isfinite(s) ? std::max(0.0, s) : 0.0;
  const double best_x = x[int(result.chosen.front())];
  m_proposal = QPointF(best_x, result.chosen_means.front());
  m_milliseconds = result.milliseconds;
  m_model_name = entry->name;
  const bool reduction = m_box->score() == AcquisitionScore::variance_reduction;
  m_plot->setAcquisition(x, score, best_x, entry->colour, tr("%1: observe here").arg(entry->name));
  m_box->showProposal(tr("x = %1 (%2 %3) · %4 ms")
                          .arg(best_x, 0, 'g', 4)
                          .arg(reduction ? tr("variance −") : tr("σ ="))
                          .arg(result.chosen_scores.front(), 0, 'g', 3)
                          .arg(result.milliseconds, 0, 'f', 0),
                      true);
  Q_EMIT answered();
}

}  // namespace npe::widgets
