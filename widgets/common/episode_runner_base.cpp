#include "common/episode_runner_base.h"

#include <torch/torch.h>

#include "common/episode_box.h"
#include "common/explorer_controller.h"
#include "common/prediction_service.h"

namespace npe::widgets {

EpisodeRunnerBase::EpisodeRunnerBase(EpisodeBox* box, ExplorerController* controller,
                                     QObject* parent)
    : QObject(parent), m_box(box), m_controller(controller) {}

int EpisodeRunnerBase::pending() const {
  int count = m_pending;
  for (const auto& step : m_script) count += step.count;
  return count;
}

ObserveStrategy EpisodeRunnerBase::strategy() const {
  return m_box->strategy();
}

void EpisodeRunnerBase::runScript(std::vector<EpisodeStep> steps) {
  for (const auto& step : steps) {
    if (step.strategy == ObserveStrategy::click) {
      Q_EMIT statusMessage(tr("A script cannot click: choose another strategy."));
      return;
    }
  }
  m_script = std::move(steps);
  nextStep();
}

void EpisodeRunnerBase::nextStep() {
  if (m_script.empty() || m_pending > 0 || waiting()) return;
  const auto step = m_script.front();
  m_script.erase(m_script.begin());
  if (m_episode) {
    m_box->setStrategy(step.strategy);  // its run's context: the start
  } else {
    const QSignalBlocker block(m_box);
    m_box->setStrategy(step.strategy);
  }
  observe(step.count);
}

void EpisodeRunnerBase::record(const PredictionResult& result, double rmse_scale) {
  if (!m_episode || !result.held_out_y.defined() || result.held_out_y.numel() == 0) return;
  const auto truth = result.held_out_y.select(1, 0).to(torch::kFloat64);
  const int count = m_episode->observed(strategy());
  for (const auto& prediction : result.models) {
    if (prediction.updating || !prediction.error.isEmpty() || !prediction.held_out_mean.defined()) {
      continue;
    }
    const auto mean = prediction.held_out_mean.select(1, 0).to(torch::kFloat64);
    EpisodeScore score;
    score.rmse = rmse_scale * (mean - truth).square().mean().sqrt().item<double>();
    score.ll = prediction.held_out_ll;
    m_episode->record(strategy(), count, prediction.id, score);
  }
}

QString EpisodeRunnerBase::progressText() const {
  const int count = m_episode ? m_episode->observed(strategy()) : 0;
  QString text = count == 1 ? tr("%1: 1 observation").arg(strategy_name(strategy()))
                            : tr("%1: %2 observations").arg(strategy_name(strategy())).arg(count);
  if (m_pending > 0) text += tr(" · %1 to go").arg(m_pending);
  return text;
}

}  // namespace npe::widgets
