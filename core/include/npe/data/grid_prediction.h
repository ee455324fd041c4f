#pragma once
// The tasks of predicting a whole gridded field at one hour with an ERA5 model (`npe predict
// --grid`): the model's task configuration made to read a grid of any resolution and units, the
// context (stations by latitude and longitude, or a random fraction of the cells), and as
// targets every cell with a value and the place features the model needs, in square tiles (a
// tile is one task, as the model saw windows of its training size). Here, in core, beside the
// Maps tab's scenes (era5_scene.h), so that the rules are tested without the command line.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "npe/data/era5_tasks.h"
#include "npe/data/gridded_field.h"
#include "npe/ground/prediction.h"
#include "npe/ground/task.h"

namespace npe {

/// A reading at a place: a weather station's.
struct StationReading {
  double latitude = 0.0, longitude = 0.0, value = 0.0;
};

struct GridContext {
  /// Stations, each at its nearest cell; readings that are not finite are skipped. None: a
  /// random `fraction` of the cells with a value (and place features) is the context.
  std::optional<std::vector<StationReading>> stations;
  double fraction = 0.05;
  uint64_t seed = 0;
};

/// One tile's task (a batch of one: its context and every target cell) and its target cells.
struct GridTile {
  Task task;
  /// Row-major cell of each target, in the order of task.xt.
  std::vector<int64_t> cells;
};

struct GridPrediction {
  /// The model's task configuration as it reads this grid: its standardisation moved into the
  /// grid's units (°C or K) and, for a checkpoint that does not record its coordinate units,
  /// the training grid's spacing.
  Era5TaskConfig task;
  /// The tiles with at least one target, row by row.
  std::vector<GridTile> tiles;
  /// The field at the hour, [rows, cols] float64 (NaN where it has no value).
  torch::Tensor truth;
  /// 1 at the cells given as context, [rows, cols] float64 (random context only: stations are
  /// not cells of the grid).
  torch::Tensor context_flag;
  int64_t num_context = 0;
  /// Stations left out: their cell has no place features.
  int64_t stations_without_place = 0;
  /// Cells the place-features file does not cover: never context, never a target.
  int64_t cells_without_place = 0;
  /// The place-features file read (for messages).
  std::filesystem::path invariants;

  /// A tile's prediction in the grid's units: {mean, stddev} of its targets, float64 [N_t].
  std::pair<torch::Tensor, torch::Tensor> in_grid_units(const Prediction& standardised) const;
};

/// The tasks for `field` at time index `time`, predicted by a model trained on `model_task`.
/// `tile` is the side of a tile in cells (0 or more than the grid: the whole grid is one task).
/// With no context (no station with a finite reading at a cell with place features, or a
/// fraction that selects no cell) num_context is 0 and there are no tiles: the caller says why.
/// Throws DataError when the place-features file cannot be read; ConfigError for a fraction
/// outside [0, 1].
GridPrediction grid_prediction(const Era5TaskConfig& model_task, const GriddedField& field,
                               int64_t time, const GridContext& context, int64_t tile);

}  // namespace npe
