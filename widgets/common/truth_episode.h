#pragma once
// "Observe the truth": an episode of the 1-D or Maps tab in which the hidden truth answers. Each
// observation is the truth at a place chosen by a strategy plus noise of a stated σ, and the
// shown models' held-out error is recorded after 0, 1, 2, … observations. A class compares
// strategies on one hidden function: every strategy's run starts from the same context, and
// observation k carries the same noise draw (and a random place the same place) in every run
// and on every replay, so that runs differ only by where they observe.

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include <QJsonObject>
#include <QPointF>
#include <QString>

namespace npe::widgets {

enum class ObserveStrategy {
  suggestion,      ///< the proposal of "Where to observe next?" (a chosen model and score)
  gp_uncertainty,  ///< where the GP's predictive std over the view is largest
  random_place,    ///< uniformly over the view
  click,           ///< where the user clicks (the truth answers, not the click's height)
};
inline constexpr std::array kObserveStrategies = {
    ObserveStrategy::suggestion, ObserveStrategy::gp_uncertainty, ObserveStrategy::random_place,
    ObserveStrategy::click};

/// Stable names for sessions ("suggestion", "gp-uncertainty", "random", "click").
QString strategy_id(ObserveStrategy strategy);
/// Throws npe::DataError for a name that is none of those.
ObserveStrategy strategy_from_id(const QString& id);
/// What the user reads ("Model's suggestion", "GP uncertainty sampling", …).
QString strategy_name(ObserveStrategy strategy);

/// One strategy's part of a scripted episode (np-explorer --observe): `count` observations.
struct EpisodeStep {
  ObserveStrategy strategy = ObserveStrategy::random_place;
  int count = 0;
};

/// One model's held-out score after some number of observations.
struct EpisodeScore {
  double rmse = std::numeric_limits<double>::quiet_NaN();
  double ll = std::numeric_limits<double>::quiet_NaN();
};

/// One strategy's run from the episode's start.
struct EpisodeRun {
  ObserveStrategy strategy = ObserveStrategy::random_place;
  /// The observations in the order made: in the 1-D tab (x, y) in base coordinates (x before
  /// the shift); in the Maps tab the station's cell (column, row of the target window), whose
  /// readings the tab makes from the data and noise().
  std::vector<QPointF> observations;
  /// Per model id: the score after scores[id][n] observations (NaN where none was recorded).
  std::map<QString, std::vector<EpisodeScore>> scores;
};

class TruthEpisode {
 public:
  TruthEpisode() = default;
  /// `start` is the context every run starts from (base coordinates; the Maps tab's station
  /// cells).
  TruthEpisode(std::vector<QPointF> start, uint64_t seed, double noise_std);

  const std::vector<QPointF>& start() const { return m_start; }
  uint64_t seed() const { return m_seed; }
  double noiseStd() const { return m_noise_std; }

  /// The noise of observation `index` (from 0): N(0, noiseStd²), the same for every run.
  double noise(int index) const;
  /// Random place `index` in [low, high): the same for every run.
  double randomPlace(int index, double low, double high) const;

  /// The run of a strategy (empty until it observes).
  const EpisodeRun* run(ObserveStrategy strategy) const;
  const std::vector<EpisodeRun>& runs() const { return m_runs; }
  /// Number of observations the strategy's run has made.
  int observed(ObserveStrategy strategy) const;
  /// Observes at base_x where the truth is `truth_value`: appends (base_x, truth + noise of the
  /// run's next index) to the strategy's run and returns it.
  QPointF observe(ObserveStrategy strategy, double base_x, double truth_value);
  /// Observes at a place whose value the tab reads itself (the Maps tab's cell): appends it to
  /// the strategy's run as it is.
  void observePlace(ObserveStrategy strategy, QPointF place);
  /// Forgets a strategy's run (it replays from the start).
  void restart(ObserveStrategy strategy);
  /// Records a model's score after `count` observations of the strategy's run (a later record
  /// of the same count replaces it: a settled prediction round refines a quick one).
  void record(ObserveStrategy strategy, int count, const QString& model, EpisodeScore score);

  QJsonObject to_json() const;
  /// Throws npe::DataError naming the first problem.
  static TruthEpisode from_json(const QJsonObject& json);

 private:
  EpisodeRun& runOf(ObserveStrategy strategy);

  std::vector<QPointF> m_start;
  uint64_t m_seed = 1;
  double m_noise_std = 0.0;
  std::vector<EpisodeRun> m_runs;
};

/// The "observe_the_truth" part of a tab's session: the episode (none: nullopt), the strategy
/// chosen and whether the plot shows log-likelihoods.
struct EpisodeSessionPart {
  std::optional<TruthEpisode> episode;
  QString strategy = "gp-uncertainty";
  bool plots_ll = false;

  QJsonObject to_json() const;
  /// Throws npe::DataError for an unknown strategy or a malformed episode.
  static EpisodeSessionPart from_json(const QJsonObject& json);
};

}  // namespace npe::widgets
