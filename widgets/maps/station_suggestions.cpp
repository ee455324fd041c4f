#include "maps/station_suggestions.h"

#include <cmath>
#include <limits>

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>

#include <torch/torch.h>

#include "common/model_list.h"

namespace npe::widgets {

StationSuggestions::StationSuggestions(PredictionService* service, const ModelList* models,
                                       std::function<std::optional<PredictionRequest>()> scene,
                                       std::function<QRect()> window,
                                       std::function<bool(const QPoint&)> observable,
                                       std::function<double()> output_scale, QWidget* parent)
    : QGroupBox(tr("Suggest stations"), parent),
      m_service(service),
      m_models(models),
      m_scene(std::move(scene)),
      m_window(std::move(window)),
      m_observable(std::move(observable)),
      m_output_scale(std::move(output_scale)) {
  setToolTip(
      tr("Where would a model observe next? Greedy sensor placement (Andersson et al. "
         "2023): each cell of the window joins the stations with the model's own mean "
         "there as its reading, the model predicts the window again, and the cell that "
         "lowers the summed predictive variance most is placed; then the next."));
  auto* form = new QFormLayout(this);
  m_model = new QComboBox(this);
  m_score = new QComboBox(this);
  m_score->addItem(tr("Variance reduction"), int(AcquisitionScore::variance_reduction));
  m_score->addItem(tr("Predictive std"), int(AcquisitionScore::predictive_std));
  m_count = new QSpinBox(this);
  m_count->setRange(1, 50);
  m_count->setValue(10);
  m_count->setToolTip(tr("Stations to propose, placed greedily one after another"));
  m_suggest = new QPushButton(tr("Suggest"), this);
  m_add_best = new QPushButton(tr("Add best"), this);
  m_add_best->setToolTip(tr("Add the first proposal as a station (undoable)"));
  m_place_all = new QPushButton(tr("Place all"), this);
  m_place_all->setToolTip(tr("Add every proposal as a station, as one undoable step"));
  m_progress = new QProgressBar(this);
  m_progress->setMaximumHeight(10);
  m_progress->setTextVisible(false);
  m_progress->hide();
  m_result = new QLabel(this);
  m_result->setWordWrap(true);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_suggest);
  buttons->addWidget(m_add_best);
  buttons->addWidget(m_place_all);
  form->addRow(tr("Model"), m_model);
  form->addRow(tr("Score"), m_score);
  form->addRow(tr("Stations"), m_count);
  form->addRow(buttons);
  form->addRow(m_progress);
  form->addRow(m_result);
  connect(m_suggest, &QPushButton::clicked, this, [this] {
    if (m_running) {
      cancel();
    } else {
      suggest();
    }
  });
  connect(m_add_best, &QPushButton::clicked, this, [this] {
    if (!m_proposals.empty())
      Q_EMIT placeRequested({m_proposals.front()}, tr("Add suggested station"));
  });
  connect(m_place_all, &QPushButton::clicked, this, [this] {
    if (!m_proposals.empty()) {
      Q_EMIT placeRequested(m_proposals,
                            tr("Place %n suggested station(s)", nullptr, int(m_proposals.size())));
    }
  });
  connect(m_service, &PredictionService::placementReady, this, &StationSuggestions::onPlacement);
  connect(m_service, &PredictionService::placementProgress, this,
          [this](uint64_t serial, qint64 done, qint64 total) {
            if (serial != m_serial || !m_running) return;
            m_progress->setRange(0, int(std::min<qint64>(total, 1 << 30)));
            m_progress->setValue(int(std::min(done, total)));
          });
  updateButtons();
}

void StationSuggestions::addModel(const QString& name, const QString& id) {
  if (m_model->findData(id) < 0) m_model->addItem(name, id);
}

void StationSuggestions::setModel(const QString& id) {
  const int index = m_model->findData(id);
  if (index >= 0) m_model->setCurrentIndex(index);
}

void StationSuggestions::setCount(int count) {
  m_count->setValue(count);
}

int StationSuggestions::count() const {
  return m_count->value();
}

void StationSuggestions::setScore(AcquisitionScore score) {
  m_score->setCurrentIndex(m_score->findData(int(score)));
}

QString StationSuggestions::scoreTitle() const {
  return m_shown_score == AcquisitionScore::variance_reduction ? tr("variance drop (K²)")
                                                               : tr("σ (K)");
}

void StationSuggestions::suggest() {
  const auto* entry = m_models->find(m_model->currentData().toString());
  auto scene = m_scene();
  if (!entry || !entry->predictor || !scene) {
    m_result->setText(!scene ? tr("No data to place stations in.") : tr("Choose a model."));
    return;
  }
  const QRect window = m_window();
  auto& task = scene->batch.task;
  // Candidates: the window's cells where a station could go; targets: every cell with inputs.
  const auto finite = torch::isfinite(task.xt[0]).all(-1);
  std::vector<int64_t> targets, candidates;
  for (int64_t i = 0; i < task.xt.size(1); ++i) {
    if (!finite[i].item<bool>()) continue;
    targets.push_back(i);
    const QPoint cell(int(i % window.width()), int(i / window.width()));
    if (m_observable(cell)) candidates.push_back(i);
  }
  if (candidates.empty()) {
    m_result->setText(tr("No free cell with data in the window."));
    return;
  }
  PlacementRequest request;
  request.serial = ++m_serial;
  request.model = *entry;
  request.score = static_cast<AcquisitionScore>(m_score->currentData().toInt());
  request.count = std::min<int64_t>(m_count->value(), int64_t(candidates.size()));
  const auto candidate_index = torch::tensor(candidates);
  request.candidates = task.xt[0].index_select(0, candidate_index);
  task.xt = task.xt.index_select(1, torch::tensor(targets));
  request.batch = scene->batch;
  m_candidate_cells = candidates;
  m_window_width = window.width();
  m_shown_score = request.score;
  m_running = true;
  m_progress->setValue(0);
  m_progress->show();
  m_result->setText(
      tr("%1 is placing %n station(s)…", nullptr, int(request.count)).arg(entry->name));
  updateButtons();
  m_service->request_placement(std::move(request));
}

void StationSuggestions::cancel() {
  if (m_running) m_service->cancelPlacement();
}

void StationSuggestions::withdraw() {
  if (m_running) {
    ++m_serial;  // its result no longer applies
    m_service->cancelPlacement();
    m_running = false;
    m_progress->hide();
    m_result->setText(tr("Stopped: the stations, window or hour changed."));
  }
  if (m_proposals.empty()) {
    updateButtons();
    return;
  }
  m_proposals.clear();
  m_score_map = torch::Tensor();
  m_model_id.clear();
  m_result->setText(tr("The proposals were for other stations, window or hour: Suggest again."));
  updateButtons();
  Q_EMIT proposalsChanged();
}

void StationSuggestions::onPlacement(const PlacementResult& result) {
  if (result.serial != m_serial || !m_running) return;
  m_running = false;
  m_progress->hide();
  updateButtons();
  const auto* entry = m_models->find(result.model_id);
  if (!result.error.isEmpty() || !entry) {
    m_result->setText(tr("Failed: %1").arg(result.error));
    Q_EMIT finished();
    return;
  }
  if (result.cancelled && result.chosen.empty()) {
    m_result->setText(tr("Cancelled."));
    Q_EMIT finished();
    return;
  }
  const double scale = m_output_scale();
  const double unit = m_shown_score == AcquisitionScore::variance_reduction ? scale * scale : scale;
  const int w = m_window_width;
  m_score_map = torch::full({w, w}, std::numeric_limits<double>::quiet_NaN(), torch::kFloat64);
  if (result.scores.defined()) {
    const auto scores = result.scores.to(torch::kFloat64).contiguous();
    for (size_t c = 0; c < m_candidate_cells.size(); ++c) {
      const auto cell = m_candidate_cells[c];
      m_score_map[cell / w][cell % w] = scores[int64_t(c)].item<double>() * unit;
    }
  }
  m_proposals.clear();
  for (const auto index : result.chosen) {
    const auto cell = m_candidate_cells[size_t(index)];
    m_proposals.emplace_back(int(cell % w), int(cell / w));
  }
  m_model_id = result.model_id;
  m_result->setText(tr("%1: %2 proposal(s) in %3 s%4")
                        .arg(entry->name)
                        .arg(m_proposals.size())
                        .arg(result.milliseconds / 1000.0, 0, 'f', 2)
                        .arg(result.cancelled ? tr(" (cancelled before the rest)") : QString()));
  updateButtons();
  Q_EMIT statusMessage(tr("Suggest stations: %1 placed %2 in %3 s")
                           .arg(entry->name)
                           .arg(m_proposals.size())
                           .arg(result.milliseconds / 1000.0, 0, 'f', 2));
  Q_EMIT proposalsChanged();
  Q_EMIT finished();
}

void StationSuggestions::updateButtons() {
  m_suggest->setText(m_running ? tr("Cancel") : tr("Suggest"));
  m_add_best->setEnabled(!m_running && !m_proposals.empty());
  m_place_all->setEnabled(!m_running && !m_proposals.empty());
}

}  // namespace npe::widgets
