#pragma once
// The model's task for what the Maps tab shows: stations in a square window of an ERA5 field at
// one hour. Built here, in core, so the tab only describes its scene and the rules (which
// readings are observations, which cells are held out, the standardisation) are tested without
// Qt.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "npe/data/era5_tasks.h"
#include "npe/ground/task.h"

namespace npe {

/// A window of the field with stations in it.
struct Era5Scene {
  /// The hour (time index of the field) predicted; the context reaches back
  /// window_time_steps() - 1 strides before it.
  int64_t hour = 0;
  /// The window's top-left cell and side, in cells of the field.
  int64_t top = 0, left = 0, width = 15;
  /// Stations as (row, column) within the window.
  std::vector<std::pair<int64_t, int64_t>> stations;
  /// Measurement noise, in the field's unit: noise[i][k] is added to station i's reading at the
  /// window's k-th time (the Maps tab's "Observe the truth" episodes; the held-out cells stay
  /// noise-free). Empty, or shorter than the stations: the rest read the field exactly.
  std::vector<std::vector<double>> noise;
};

/// The task of a scene (batch of one) and the held-out cells the tab scores.
struct Era5SceneTask {
  /// Context: each station's readings at the window's times, skipping missing readings and
  /// cells without place features. Targets: every cell of the window at the hour, row-major.
  /// Outputs standardised with the source's statistics; yt is undefined.
  Task task;
  /// Targets that are neither stations nor without a value or place features: [N_held] long.
  torch::Tensor held_out_index;
  /// Their true values, standardised: [N_held, 1] float.
  torch::Tensor held_out_y;
};

/// A place by latitude and longitude (degrees).
struct LatLon {
  double latitude = 0.0, longitude = 0.0;
};

/// Stations given by latitude and longitude, placed in a window of the source's size.
struct StationScene {
  Era5Scene scene;
  /// Stations outside the window or at a cell another station already holds.
  int64_t left_out = 0;
};

/// A scene at `hour` whose stations are the field's cells nearest to `stations`, in a window of
/// source.config().window cells centred on the cell nearest `centre` or, without one, on the
/// stations' middle cell; moved inside the field where the centre is nearer its edge than half
/// a window. Throws DataError for a field smaller than the window.
StationScene scene_for_stations(const Era5TaskSource& source, int64_t hour,
                                const std::vector<LatLon>& stations,
                                std::optional<LatLon> centre = std::nullopt);

/// Throws DataError for an hour without its window's earlier times, a window or station outside
/// the field, or noise that is not finite or not one value per time of the window.
Era5SceneTask scene_task(const Era5TaskSource& source, const Era5Scene& scene);

}  // namespace npe
