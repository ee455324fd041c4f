#pragma once
// Runs the 1-D tab's "Observe the truth" episodes: starts one from the context shown (the truth
// hidden), observes where the chosen strategy says once the models have predicted for the last
// observation, records every shown model's held-out RMSE and log-likelihood of each prediction
// round, and keeps one run per strategy, each its own context (start + its observations), so
// that switching strategy or replaying shows that run's context.

#include <optional>
#include <vector>

#include <QObject>

#include "common/truth_episode.h"

namespace npe::widgets {

class ContextEditor;
class EpisodeBox;
class ExplorerController;
class GroundTruthBox;
class ObservationSuggester;
class SuggestionBox;
struct PredictionResult;

class EpisodeRunner final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EpisodeRunner)

 public:
  EpisodeRunner(EpisodeBox* box, ContextEditor* context, GroundTruthBox* truth,
                ExplorerController* controller, ObservationSuggester* suggester,
                SuggestionBox* suggestion_box, QObject* parent = nullptr);

  const std::optional<TruthEpisode>& episode() const { return m_episode; }
  /// Observations asked for and not made yet (each waits for the models' predictions), those
  /// of a script's later steps included.
  int pending() const;

  /// Observes `count` times with the box's strategy, one prediction round apart; starts an
  /// episode first when none runs. The click strategy observes on the plot's clicks instead.
  void observe(int count);
  /// Back to the start context; the box's strategy observes again from there.
  void replay();
  /// Runs the steps one after another from the episode's start (np-explorer --observe): each
  /// strategy's run, then the next's. A step of the click strategy is refused.
  void runScript(std::vector<EpisodeStep> steps);
  /// Ends the episode and shows the truth (the reveal).
  void end();
  /// A click on the plot at display x: observed (true) while an episode runs with the click
  /// strategy, else left to the plot's usual add (false).
  bool takeClick(double shown_x);
  /// Restores a session's episode (nullopt: none) and the strategy shown; the context is the
  /// session's own.
  void restore(std::optional<TruthEpisode> episode);

 Q_SIGNALS:
  void statusMessage(const QString& text);
  /// An episode started (the tab shows its box).
  void started();

 private:
  void start();
  /// Starts the script's next step once the current one has made its observations.
  void nextStep();
  void onRoundComplete(const PredictionResult& result);
  void record(const PredictionResult& result);
  /// Makes the next pending observation when the models have caught up with the last one.
  void tryObserve();
  /// Observes the truth at display x with the current strategy.
  void observeAt(double shown_x);
  /// Shows the run of the box's strategy: its context and curves.
  void showRun();
  void refreshBox();
  ObserveStrategy strategy() const;

  EpisodeBox* m_box;
  ContextEditor* m_context;
  GroundTruthBox* m_truth;
  ExplorerController* m_controller;
  ObservationSuggester* m_suggester;
  SuggestionBox* m_suggestion_box;
  std::optional<TruthEpisode> m_episode;
  int m_pending = 0;
  std::vector<EpisodeStep> m_script;  ///< the steps still to run, next first
};

}  // namespace npe::widgets
