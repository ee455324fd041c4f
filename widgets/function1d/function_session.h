#pragma once
// The 1-D explorer's section of a session file: ground truth, context points, shift, models
// and view (common/session_file.h holds the sections of every tab).

#include <optional>
#include <vector>

#include <QJsonObject>
#include <QPointF>
#include <QString>
#include <QStringList>

#include "common/truth_episode.h"
#include "ground_truth.h"

namespace npe::widgets {

struct Session {
  /// false: free-hand mode (points only, no ground truth).
  bool has_truth = true;
  GroundTruthSpec truth;
  bool show_truth = true;
  /// Series mode: the data of this model (a checkpoint among `checkpoints`), window
  /// series_window (from 0) of series_split ("test", "validation" or "training"). Empty: the
  /// GP sample or free-hand mode above.
  QString series_model;
  QString series_split = "test";
  qint64 series_window = 0;
  /// Context points in base coordinates (before the shift).
  std::vector<QPointF> context;
  double shift = 0.0;
  /// Ids of the models shown ("gp-oracle", "gp-fitted", "shipped:tetnp", or a checkpoint path).
  QStringList enabled_models;
  /// Checkpoints opened by the user (besides the shipped ones).
  QStringList checkpoints;
  /// Coherent samples drawn per joint model (0: off) and the model whose correlation hover
  /// shows (empty: off).
  int samples = 0;
  QString correlation_model;
  /// Which ±2σ bands are drawn: "focused" (the model in focus), "all" or "none".
  QString bands = "focused";
  /// "Where to observe next?": the proposing model (empty: off) and its score
  /// ("variance_reduction" or "predictive_std").
  QString suggestion_model;
  QString suggestion_score = "variance_reduction";
  /// "Observe the truth": the episode (none: nullopt), the strategy chosen ("suggestion",
  /// "gp-uncertainty", "random" or "click") and whether its plot shows the log-likelihood.
  std::optional<TruthEpisode> episode;
  QString episode_strategy = "gp-uncertainty";
  bool episode_plots_ll = false;
  bool has_view = false;
  double view_x_low = -4, view_x_high = 4, view_y_low = -3, view_y_high = 3;

  QJsonObject to_json() const;
  /// Throws npe::DataError naming the first problem (wrong format, missing or non-finite field).
  static Session from_json(const QJsonObject& json);
};

}  // namespace npe::widgets
