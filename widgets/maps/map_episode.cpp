#include "maps/map_episode.h"

#include <algorithm>
#include <cmath>

#include <QTimer>

#include <torch/torch.h>

#include "common/episode_box.h"
#include "common/explorer_controller.h"
#include "common/model_list.h"
#include "common/prediction_service.h"
#include "maps/station_set.h"
#include "maps/station_suggestions.h"

namespace npe::widgets {

MapEpisodeRunner::MapEpisodeRunner(EpisodeBox* box, StationSet* stations,
                                   ExplorerController* controller, StationSuggestions* suggestions,
                                   MapEpisodeHooks hooks, QObject* parent)
    : EpisodeRunnerBase(box, controller, parent),
      m_stations(stations),
      m_suggestions(suggestions),
      m_hooks(std::move(hooks)) {
  connect(m_box, &EpisodeBox::observeRequested, this, &MapEpisodeRunner::observe);
  connect(m_box, &EpisodeBox::replayRequested, this, &MapEpisodeRunner::replay);
  connect(m_box, &EpisodeBox::endRequested, this, &MapEpisodeRunner::end);
  connect(m_box, &EpisodeBox::strategyChanged, this, [this] {
    m_pending = 0;
    if (m_episode) showRun();
    refreshBox();
  });
  connect(m_controller, &ExplorerController::roundComplete, this,
          [this](const PredictionResult& result, const QString&) { onRoundComplete(result); });
  connect(m_suggestions, &StationSuggestions::finished, this, [this] {
    if (!m_suggesting) return;
    m_suggesting = false;
    if (m_suggestions->proposals().empty()) {
      stop(tr("\"Suggest stations\" made no proposal (see its group)."));
      return;
    }
    tryObserve();
  });
  connect(m_controller->models(), &ModelList::modelToggled, this, [this] { refreshBox(); });
  refreshBox();
}

void MapEpisodeRunner::start() {
  std::vector<QPointF> start;
  for (const auto& cell : m_stations->cells()) start.emplace_back(cell);
  // The seed follows the hour: a new episode at the same hour draws the same noise.
  m_episode.emplace(std::move(start), uint64_t(m_hooks.hour()) + 1,
                    kNoiseFraction * m_hooks.data_stddev());
  m_hooks.hide_truth(true);
  // The models' predictions for the start stations are every run's first scores.
  const auto& last = m_controller->lastCompleteRound();
  if (last.serial == m_controller->serial()) record(last, m_hooks.data_stddev());
  refreshBox();
  Q_EMIT started();
}

void MapEpisodeRunner::stop(const QString& why) {
  m_pending = 0;
  m_suggesting = false;
  m_script.clear();
  Q_EMIT statusMessage(why);
  refreshBox();
}

void MapEpisodeRunner::observe(int count) {
  if (!m_hooks.window().isValid() || m_hooks.data_stddev() <= 0.0) {
    m_script.clear();
    Q_EMIT statusMessage(tr("Observing the truth needs data: open a gridded file."));
    return;
  }
  if (!m_episode) start();
  if (strategy() == ObserveStrategy::click) {
    Q_EMIT statusMessage(
        tr("Click a cell of the target window: a station reports the truth there."));
    refreshBox();
    return;
  }
  if (strategy() == ObserveStrategy::gp_uncertainty) {
    const auto* gp = m_controller->models()->find(kUncertaintyGp);
    if (!gp) return stop(tr("Uncertainty sampling needs the fitted GP, which this tab lacks."));
    if (!gp->enabled) m_controller->models()->setEnabled(kUncertaintyGp, true);
  }
  m_pending += count;
  refreshBox();
  tryObserve();
}

void MapEpisodeRunner::tryObserve() {
  if (!m_episode || m_pending <= 0 || m_suggesting) return;
  // The models must have predicted for the stations as they are: the next cell depends on that
  // prediction, and its scores are the curves' last point.
  const auto& last = m_controller->lastCompleteRound();
  if (last.serial != m_controller->serial()) return;
  const QRect window = m_hooks.window();
  const int w = window.width();
  std::optional<QPoint> cell;
  switch (strategy()) {
    case ObserveStrategy::suggestion: {
      if (m_suggestions->proposals().empty()) {
        // Only the best is observed; the search then starts again from the new stations.
        m_suggestions->setCount(1);
        m_suggesting = true;
        m_suggestions->suggest();
        if (!m_suggestions->running()) {
          stop(tr("Choose the proposing model in \"Suggest stations\" first."));
        }
        return;
      }
      cell = m_suggestions->proposals().front();
      break;
    }
    case ObserveStrategy::gp_uncertainty: {
      for (const auto& prediction : last.models) {
        if (prediction.id == kUncertaintyGp && !prediction.error.isEmpty()) {
          return stop(tr("The fitted GP could not predict: %1").arg(prediction.error));
        }
        if (prediction.id != kUncertaintyGp || prediction.updating ||
            !prediction.stddev.defined() || prediction.stddev.size(0) != int64_t(w) * w) {
          continue;
        }
        const auto sd = prediction.stddev.select(1, 0).to(torch::kFloat64).contiguous();
        const auto* values = sd.data_ptr<double>();
        double best = -1.0;
        for (int i = 0; i < w * w; ++i) {
          const QPoint candidate(i % w, i / w);
          if (std::isfinite(values[i]) && values[i] > best && m_hooks.observable(candidate)) {
            best = values[i];
            cell = candidate;
          }
        }
        if (!cell) return stop(tr("No free cell with data is left in the window."));
      }
      if (!cell) return;  // its prediction is on the way
      break;
    }
    case ObserveStrategy::random_place: {
      std::vector<QPoint> free;
      for (int i = 0; i < w * w; ++i) {
        if (m_hooks.observable(QPoint(i % w, i / w))) free.emplace_back(i % w, i / w);
      }
      if (free.empty()) return stop(tr("No free cell with data is left in the window."));
      const double u = m_episode->randomPlace(m_episode->observed(ObserveStrategy::random_place),
                                              0.0, double(free.size()));
      cell = free[std::min(size_t(u), free.size() - 1)];
      break;
    }
    case ObserveStrategy::click:
      m_pending = 0;
      return;
  }
  --m_pending;
  observeAt(*cell);
}

bool MapEpisodeRunner::takeClick(const QPoint& cell) {
  if (!m_episode || strategy() != ObserveStrategy::click) return false;
  if (!m_hooks.observable(cell)) {
    Q_EMIT statusMessage(tr("No station can report there: a station or no data is at that cell."));
    return true;
  }
  observeAt(cell);
  return true;
}

void MapEpisodeRunner::observeAt(const QPoint& cell) {
  m_episode->observePlace(strategy(), QPointF(cell));
  auto cells = m_stations->cells();
  cells.push_back(cell);
  m_stations->replace(std::move(cells));
  refreshBox();
}

std::vector<std::vector<double>> MapEpisodeRunner::stationNoise(
    const std::vector<QPoint>& cells) const {
  if (!m_episode) return {};
  const auto* run = m_episode->run(strategy());
  if (!run) return {};
  const int readings = m_hooks.readings();
  std::vector<std::vector<double>> noise(cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto found =
        std::find(run->observations.begin(), run->observations.end(), QPointF(cells[i]));
    if (found == run->observations.end()) continue;
    const int k = int(found - run->observations.begin());
    for (int j = 0; j < readings; ++j) noise[i].push_back(m_episode->noise(k * readings + j));
  }
  // Stations without noise at the end need no entry (Era5Scene::noise may be shorter); the
  // others read the data exactly with zeros.
  while (!noise.empty() && noise.back().empty()) noise.pop_back();
  for (auto& n : noise) {
    if (n.empty()) n.assign(size_t(readings), 0.0);
  }
  return noise;
}

void MapEpisodeRunner::onRoundComplete(const PredictionResult& result) {
  if (!m_episode || result.serial != m_controller->serial()) return;
  record(result, m_hooks.data_stddev());  // RMSE in kelvin
  refreshBox();
  if (m_pending == 0 && !m_suggesting && !m_script.empty()) {
    QTimer::singleShot(0, this, [this] { nextStep(); });
    return;
  }
  QTimer::singleShot(0, this, &MapEpisodeRunner::tryObserve);
}

void MapEpisodeRunner::replay() {
  if (!m_episode) return;
  m_pending = 0;
  m_suggesting = false;
  m_episode->restart(strategy());
  showRun();
  refreshBox();
}

void MapEpisodeRunner::showRun() {
  std::vector<QPoint> cells;
  for (const auto& p : m_episode->start()) cells.push_back(p.toPoint());
  if (const auto* run = m_episode->run(strategy())) {
    for (const auto& p : run->observations) cells.push_back(p.toPoint());
  }
  if (cells == m_stations->cells()) return;
  m_stations->replace(std::move(cells));
}

void MapEpisodeRunner::end() {
  if (!m_episode) return;
  m_episode.reset();
  m_pending = 0;
  m_suggesting = false;
  m_script.clear();
  m_hooks.hide_truth(false);  // the reveal
  refreshBox();
}

void MapEpisodeRunner::sceneChanged() {
  if (!m_episode) return;
  end();
  Q_EMIT statusMessage(tr("The hour, window or data changed: the episode ended."));
}

void MapEpisodeRunner::restore(std::optional<TruthEpisode> episode) {
  m_pending = 0;
  m_suggesting = false;
  m_script.clear();
  m_episode = std::move(episode);
  m_hooks.hide_truth(m_episode.has_value());
  refreshBox();
}

void MapEpisodeRunner::refreshBox() {
  m_box->setRunning(m_episode.has_value());
  m_box->showEpisode(m_episode ? &*m_episode : nullptr, *m_controller->models());
  const bool observable = m_hooks.window().isValid() && m_hooks.data_stddev() > 0.0;
  m_box->setObservable(observable, tr("Observing the truth needs data: open a gridded file."));
  if (!observable) return;
  if (!m_episode) {
    m_box->setStatus(
        tr("Observe starts an episode from the stations shown at this hour; the truth is hidden "
           "until End."));
    return;
  }
  QString text = progressText();
  if (strategy() == ObserveStrategy::click) text += tr(" · click a cell to observe");
  text += tr(" · noise σ = %1 K").arg(m_episode->noiseStd(), 0, 'g', 2);
  m_box->setStatus(text);
}

}  // namespace npe::widgets
