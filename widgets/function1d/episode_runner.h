#pragma once
// Runs the 1-D tab's "Observe the truth" episodes: starts one from the context shown (the truth
// hidden), observes where the chosen strategy says once the models have predicted for the last
// observation, records every shown model's held-out RMSE and log-likelihood of each prediction
// round, and keeps one run per strategy, each its own context (start + its observations), so
// that switching strategy or replaying shows that run's context.

#include <optional>

#include "common/episode_runner_base.h"

namespace npe::widgets {

class ContextEditor;
class GroundTruthBox;
class ObservationSuggester;
class SuggestionBox;
struct PredictionResult;

class EpisodeRunner final : public EpisodeRunnerBase {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EpisodeRunner)

 public:
  EpisodeRunner(EpisodeBox* box, ContextEditor* context, GroundTruthBox* truth,
                ExplorerController* controller, ObservationSuggester* suggester,
                SuggestionBox* suggestion_box, QObject* parent = nullptr);

  /// Observes `count` times with the box's strategy, one prediction round apart; starts an
  /// episode first when none runs. The click strategy observes on the plot's clicks instead.
  void observe(int count) override;
  /// Back to the start context; the box's strategy observes again from there.
  void replay();
  /// Ends the episode and shows the truth (the reveal).
  void end();
  /// A click on the plot at display x: observed (true) while an episode runs with the click
  /// strategy, else left to the plot's usual add (false).
  bool takeClick(double shown_x);
  /// Restores a session's episode (nullopt: none) and the strategy shown; the context is the
  /// session's own.
  void restore(std::optional<TruthEpisode> episode);

 private:
  void start();
  void onRoundComplete(const PredictionResult& result);
  /// Makes the next pending observation when the models have caught up with the last one.
  void tryObserve();
  /// Observes the truth at display x with the current strategy.
  void observeAt(double shown_x);
  /// Shows the run of the box's strategy: its context and curves.
  void showRun();
  void refreshBox();

  ContextEditor* m_context;
  GroundTruthBox* m_truth;
  ObservationSuggester* m_suggester;
  SuggestionBox* m_suggestion_box;
};

}  // namespace npe::widgets
