#pragma once
// Runs the Maps tab's "Observe the truth" episodes: the data's field at the hour shown is the
// hidden truth (the tab stops drawing it), and each observation is a new station at the cell a
// strategy chooses — "Suggest stations"' best proposal, the fitted GP's largest predictive σ,
// a random free cell, or the user's click — whose readings are the field plus noise. Every
// shown model's held-out RMSE (in kelvin) and log-likelihood on the window's other cells is
// recorded after each prediction round; each strategy keeps its own run from the same start
// stations, with the same noise for its k-th observation, so that a class compares strategies
// on the same hour (common/truth_episode.h holds the episode, common/episode_box.h the group).

#include <functional>
#include <optional>
#include <vector>

#include <QPoint>
#include <QRect>

#include "common/episode_runner_base.h"

namespace npe::widgets {

class StationSet;
class StationSuggestions;
struct PredictionResult;

/// What the runner needs of the tab.
struct MapEpisodeHooks {
  /// Whether a station could report from a cell of the target window (usable and free).
  std::function<bool(const QPoint& cell)> observable;
  std::function<QRect()> window;
  /// The hour shown (the episode's seed).
  std::function<int()> hour;
  /// The standard deviation of the data in its unit (its standardisation's).
  std::function<double()> data_stddev;
  /// Readings per station: the window's times.
  std::function<int()> readings;
  /// Hides the truth (an episode runs) or shows it again (the reveal).
  std::function<void(bool hidden)> hide_truth;
};

class MapEpisodeRunner final : public EpisodeRunnerBase {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MapEpisodeRunner)

 public:
  /// The model whose predictive σ uncertainty sampling follows: the GP fitted per scene.
  static constexpr const char* kUncertaintyGp = "gp-se-ard";
  /// The observation noise, as a fraction of the data's standard deviation (0.22 K on the
  /// shipped month): a thermometer's error plus what one cell does not represent.
  static constexpr double kNoiseFraction = 0.1;

  MapEpisodeRunner(EpisodeBox* box, StationSet* stations, ExplorerController* controller,
                   StationSuggestions* suggestions, MapEpisodeHooks hooks,
                   QObject* parent = nullptr);

  /// Observes `count` times with the box's strategy, one prediction round apart; starts an
  /// episode from the stations shown first when none runs.
  void observe(int count) override;
  /// Back to the start stations; the box's strategy observes again from there.
  void replay();
  /// Ends the episode and shows the truth.
  void end();
  /// A click on a window cell: observed there (true) while an episode runs with the click
  /// strategy, else left to the usual station edit (false).
  bool takeClick(const QPoint& cell);
  /// Restores a session's episode (nullopt: none); the stations are the session's own.
  void restore(std::optional<TruthEpisode> episode);
  /// The noise of each station's readings (Era5Scene::noise), in the data's unit: the k-th
  /// observation of the run shown reads noise(k · readings + j) at its j-th time; the start
  /// stations and stations the user adds read the data exactly.
  std::vector<std::vector<double>> stationNoise(const std::vector<QPoint>& cells) const;
  /// The hour, window or data changed: the hidden truth is another one, the episode ends.
  void sceneChanged();

 private:
  void start();
  bool waiting() const override { return m_suggesting; }
  void onRoundComplete(const PredictionResult& result);
  void tryObserve();
  void observeAt(const QPoint& cell);
  void showRun();
  void refreshBox();
  void stop(const QString& why);

  StationSet* m_stations;
  StationSuggestions* m_suggestions;
  MapEpisodeHooks m_hooks;
  bool m_suggesting = false;  ///< a search for the suggestion strategy's next cell runs
};

}  // namespace npe::widgets
