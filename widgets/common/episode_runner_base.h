#pragma once
// What the 1-D and Maps tabs' "Observe the truth" runners share: the episode, the observations
// asked for and not made yet, the steps of a script (np-explorer --observe), scoring a
// prediction round and the box's progress line. Each tab's runner decides where to observe,
// what the truth is and how the context changes (function1d/episode_runner.h,
// maps/map_episode.h).

#include <optional>
#include <vector>

#include <QObject>

#include "common/truth_episode.h"

namespace npe::widgets {

class EpisodeBox;
class ExplorerController;
struct PredictionResult;

class EpisodeRunnerBase : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EpisodeRunnerBase)

 public:
  const std::optional<TruthEpisode>& episode() const { return m_episode; }
  /// Observations asked for and not made yet (each waits for the models' predictions), those
  /// of a script's later steps included.
  int pending() const;
  /// Observes `count` times with the box's strategy, one prediction round apart; starts an
  /// episode from the context shown first when none runs.
  virtual void observe(int count) = 0;
  /// Runs the steps one after another from the episode's start: each strategy's run, then the
  /// next's. A step of the click strategy is refused.
  void runScript(std::vector<EpisodeStep> steps);

 Q_SIGNALS:
  void statusMessage(const QString& text);
  /// An episode started (the tab shows its box).
  void started();

 protected:
  EpisodeRunnerBase(EpisodeBox* box, ExplorerController* controller, QObject* parent);
  ~EpisodeRunnerBase() override = default;

  ObserveStrategy strategy() const;
  /// Starts the script's next step once the current one has made its observations (and the
  /// runner waits for nothing else).
  void nextStep();
  /// Something other than the models' round keeps the next observation waiting.
  virtual bool waiting() const { return false; }
  /// Records every settled model's held-out RMSE (times `rmse_scale`: the data's unit) and
  /// log-likelihood of the round after the current run's observations so far.
  void record(const PredictionResult& result, double rmse_scale);
  /// "<strategy>: N observation(s) · K to go" for the box's status line.
  QString progressText() const;

  EpisodeBox* m_box;
  ExplorerController* m_controller;
  std::optional<TruthEpisode> m_episode;
  int m_pending = 0;
  std::vector<EpisodeStep> m_script;  ///< the steps still to run, next first
};

}  // namespace npe::widgets
