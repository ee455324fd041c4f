#include "function1d/episode_runner.h"

#include <cmath>

#include <QTimer>

#include <torch/torch.h>

#include "common/episode_box.h"
#include "common/explorer_controller.h"
#include "common/model_list.h"
#include "common/prediction_service.h"
#include "function1d/context_editor.h"
#include "function1d/ground_truth_box.h"
#include "function1d/observation_suggester.h"
#include "function1d/point_set.h"
#include "function1d/suggestion_box.h"

namespace npe::widgets {
namespace {

/// The model whose predictive std the GP uncertainty strategy follows: the GP with the truth's
/// own kernel (gp_baselines.cpp).
const QString kUncertaintyGp = "gp-oracle";

}  // namespace

EpisodeRunner::EpisodeRunner(EpisodeBox* box, ContextEditor* context, GroundTruthBox* truth,
                             ExplorerController* controller, ObservationSuggester* suggester,
                             SuggestionBox* suggestion_box, QObject* parent)
    : EpisodeRunnerBase(box, controller, parent),
      m_context(context),
      m_truth(truth),
      m_suggester(suggester),
      m_suggestion_box(suggestion_box) {
  connect(m_box, &EpisodeBox::observeRequested, this, &EpisodeRunner::observe);
  connect(m_box, &EpisodeBox::replayRequested, this, &EpisodeRunner::replay);
  connect(m_box, &EpisodeBox::endRequested, this, &EpisodeRunner::end);
  connect(m_box, &EpisodeBox::strategyChanged, this, [this] {
    m_pending = 0;
    if (m_episode) showRun();
    refreshBox();
  });
  connect(m_controller, &ExplorerController::roundComplete, this,
          [this](const PredictionResult& result, const QString&) { onRoundComplete(result); });
  connect(m_suggester, &ObservationSuggester::answered, this, &EpisodeRunner::tryObserve);
  connect(m_truth, &GroundTruthBox::truthChanged, this, [this] {
    if (!m_episode) return;
    Q_EMIT statusMessage(tr("The hidden function changed: the episode ended."));
    m_episode.reset();
    m_pending = 0;
    m_script.clear();
    refreshBox();
  });
  connect(m_controller->models(), &ModelList::modelToggled, this, [this] { refreshBox(); });
  refreshBox();
}

void EpisodeRunner::start() {
  const auto& spec = m_truth->truth().spec();
  m_episode.emplace(m_context->points()->points(), spec.seed, spec.noise_std);
  m_truth->setShowTruth(false);
  // The models' predictions for the start context are the runs' first scores.
  const auto& last = m_controller->lastCompleteRound();
  if (last.serial == m_controller->serial()) record(last, 1.0);
  refreshBox();
  Q_EMIT started();
}

void EpisodeRunner::observe(int count) {
  if (!m_truth->hasTruth() || m_truth->seriesMode()) {
    m_script.clear();
    Q_EMIT statusMessage(tr("Observing the truth needs a hidden function: choose GP sample."));
    return;
  }
  if (!m_episode) start();
  if (strategy() == ObserveStrategy::click) {
    Q_EMIT statusMessage(tr("Click on the plot: the hidden truth answers at that x."));
    refreshBox();
    return;
  }
  if (strategy() == ObserveStrategy::suggestion && m_suggestion_box->model().isEmpty()) {
    m_script.clear();
    Q_EMIT statusMessage(
        tr("Choose the proposing model in \"Where to observe next?\" (Suggest with) first."));
    refreshBox();
    return;
  }
  if (strategy() == ObserveStrategy::gp_uncertainty) {
    const auto* gp = m_controller->models()->find(kUncertaintyGp);
    if (gp && !gp->enabled) m_controller->models()->setEnabled(kUncertaintyGp, true);
  }
  m_pending += count;
  refreshBox();
  tryObserve();
}

void EpisodeRunner::tryObserve() {
  if (!m_episode || m_pending <= 0) return;
  // The models must have predicted for the context as it is (and the suggestion been made for
  // it): the next place depends on that prediction, and its scores are the curve's last point.
  const auto& last = m_controller->lastCompleteRound();
  if (last.serial != m_controller->serial()) return;
  double x = std::numeric_limits<double>::quiet_NaN();
  switch (strategy()) {
    case ObserveStrategy::suggestion: {
      if (m_suggester->pending()) return;
      const auto proposal = m_suggester->proposal();
      if (!proposal) {
        m_pending = 0;
        m_script.clear();
        Q_EMIT statusMessage(
            tr("The suggestion has no proposal (see \"Where to observe next?\")."));
        refreshBox();
        return;
      }
      x = proposal->x();
      break;
    }
    case ObserveStrategy::gp_uncertainty: {
      for (const auto& prediction : last.models) {
        if (prediction.id == kUncertaintyGp && !prediction.error.isEmpty()) {
          m_pending = 0;
          m_script.clear();
          Q_EMIT statusMessage(tr("The GP oracle could not predict: %1").arg(prediction.error));
          refreshBox();
          return;
        }
        if (prediction.id != kUncertaintyGp || prediction.updating ||
            !prediction.stddev.defined() || !last.xt.defined()) {
          continue;
        }
        const auto index = prediction.stddev.select(1, 0).argmax().item<int64_t>();
        x = last.xt[index][0].item<double>();
      }
      if (!std::isfinite(x)) return;  // its prediction is on the way
      break;
    }
    case ObserveStrategy::random_place: {
      const auto range = m_controller->lastCompleteRound().xt;
      if (!range.defined() || range.numel() == 0) return;
      x = m_episode->randomPlace(m_episode->observed(ObserveStrategy::random_place),
                                 range.min().item<double>(), range.max().item<double>());
      break;
    }
    case ObserveStrategy::click:
      m_pending = 0;
      return;
  }
  --m_pending;
  observeAt(x);
}

bool EpisodeRunner::takeClick(double shown_x) {
  if (!m_episode || strategy() != ObserveStrategy::click) return false;
  observeAt(shown_x);
  return true;
}

void EpisodeRunner::observeAt(double shown_x) {
  const double base_x = shown_x - m_context->shift();
  const double truth = m_truth->truth().value(base_x);
  if (!std::isfinite(truth)) {
    m_pending = 0;
    m_script.clear();
    Q_EMIT statusMessage(tr("x = %1 is outside the hidden function's range [-%2, %2].")
                             .arg(shown_x, 0, 'g', 4)
                             .arg(GroundTruth::kHalfRange));
    refreshBox();
    return;
  }
  const auto point = m_episode->observe(strategy(), base_x, truth);
  m_context->add(QPointF(point.x() + m_context->shift(), point.y()));
  refreshBox();
}

void EpisodeRunner::onRoundComplete(const PredictionResult& result) {
  if (!m_episode || result.serial != m_controller->serial()) return;
  record(result, 1.0);
  refreshBox();
  // A script's next strategy once this one's last observation is scored.
  if (m_pending == 0 && !m_script.empty()) {
    QTimer::singleShot(0, this, &EpisodeRunner::nextStep);
    return;
  }
  // After the suggestion's own answer, for that strategy; a round's receivers first.
  if (strategy() != ObserveStrategy::suggestion) {
    QTimer::singleShot(0, this, &EpisodeRunner::tryObserve);
  }
}

void EpisodeRunner::replay() {
  if (!m_episode) return;
  m_pending = 0;
  m_episode->restart(strategy());
  showRun();
  refreshBox();
}

void EpisodeRunner::showRun() {
  auto points = m_episode->start();
  if (const auto* run = m_episode->run(strategy())) {
    points.insert(points.end(), run->observations.begin(), run->observations.end());
  }
  if (points == m_context->points()->points()) return;
  m_context->replace(std::move(points), false,
                     tr("Episode: %1's run").arg(strategy_name(strategy())));
}

void EpisodeRunner::end() {
  if (!m_episode) return;
  m_episode.reset();
  m_pending = 0;
  m_script.clear();
  m_truth->setShowTruth(true);  // the reveal
  refreshBox();
}

void EpisodeRunner::restore(std::optional<TruthEpisode> episode) {
  m_pending = 0;
  m_episode = std::move(episode);
  refreshBox();
}

void EpisodeRunner::refreshBox() {
  m_box->setRunning(m_episode.has_value());
  m_box->showEpisode(m_episode ? &*m_episode : nullptr, *m_controller->models());
  const bool observable = m_truth->hasTruth() && !m_truth->seriesMode();
  m_box->setObservable(observable,
                       tr("Observing the truth needs a hidden function: choose GP sample in "
                          "\"Ground truth\"."));
  if (!observable) return;
  if (!m_episode) {
    m_box->setStatus(
        tr("Observe starts an episode from the context shown; the truth is hidden "
           "until End (or Show truth)."));
    return;
  }
  QString text = progressText();
  if (strategy() == ObserveStrategy::click) text += tr(" · click on the plot to observe");
  text += tr(" · noise σ = %1").arg(m_episode->noiseStd(), 0, 'g', 3);
  m_box->setStatus(text);
}

}  // namespace npe::widgets
