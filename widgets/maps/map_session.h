#pragma once
// The maps tab's section of a session file: the data file, stations, hour, region shift, layer
// and view, and the models shown (common/session_file.h holds the sections of every tab).

#include <cstdint>
#include <optional>
#include <vector>

#include <QJsonObject>
#include <QPoint>
#include <QString>

#include "common/truth_episode.h"

namespace npe::widgets {

struct MapSession {
  /// The gridded file and its variable; empty: the data the tab shows (the default data).
  QString data, variable;
  /// Stations as cells of the target window (x = column, y = row).
  std::vector<QPoint> stations;
  int hour = 0;
  int north = 0, east = 0;
  QString layer = "truth";
  bool three_d = false;
  /// "Suggest stations" shown when saved: its model and count (empty model: none). Proposals
  /// are not stored: opening the session computes them again for its stations.
  QString suggestion_model;
  int suggestion_count = 10;
  /// The controller's part (ExplorerController::sessionModels).
  QJsonObject models;
  /// "Observe the truth": the episode (none: nullopt; its start and observations are cells of
  /// the window), the strategy chosen and whether the plot shows log-likelihoods.
  std::optional<TruthEpisode> episode;
  QString episode_strategy = "gp-uncertainty";
  bool episode_plots_ll = false;

  QJsonObject to_json() const;
  /// Throws npe::DataError ("maps: ...") for a malformed section.
  static MapSession from_json(const QJsonObject& json);
  /// Throws npe::DataError when the stations or the episode's cells do not fit a window x
  /// window target window or the hour is not one of `times`.
  void check(int window, int64_t times) const;
};

}  // namespace npe::widgets
