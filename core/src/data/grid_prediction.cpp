#include "npe/data/grid_prediction.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <torch/torch.h>

#include "npe/data/place_features.h"
#include "npe/errors.h"

namespace npe {
namespace {

int64_t nearest(const std::vector<double>& axis, double value) {
  int64_t best = 0;
  for (size_t i = 1; i < axis.size(); ++i)
    if (std::abs(axis[i] - value) < std::abs(axis[size_t(best)] - value)) best = int64_t(i);
  return best;
}

struct ContextPoint {
  int64_t cell;
  std::vector<float> x;
  float y;
};

}  // namespace

std::pair<torch::Tensor, torch::Tensor> GridPrediction::in_grid_units(
    const Prediction& standardised) const {
  return {standardised.mean[0].select(-1, 0).to(torch::kFloat64) * task.stddev + task.mean,
          standardised.stddev[0].select(-1, 0).to(torch::kFloat64) * task.stddev};
}

GridPrediction grid_prediction(const Era5TaskConfig& model_task, const GriddedField& field,
                               int64_t time, const GridContext& context, int64_t tile) {
  if (!(context.fraction >= 0.0 && context.fraction <= 1.0)) {
    throw ConfigError("the context fraction must be in [0, 1]");
  }
  GridPrediction out;
  const int64_t rows = field.num_latitudes(), cols = field.num_longitudes();
  // The model's inputs are in units of its training grid's spacing north of the split latitude
  // and east of the origin longitude (Era5TaskConfig::coordinates), so a grid of another
  // resolution is seen at its true distances.
  auto& task = out.task;
  task = model_task;
  // Standardising with the statistics moved into the file's unit reads and writes files in °C,
  // °F or any temperature unit as they are (the model itself works in kelvin).
  const auto unit = file_temperature_unit(field);
  task.mean = unit.from_kelvin(task.mean);
  task.stddev = unit.difference_from_kelvin(task.stddev);
  if (std::isnan(task.latitude_unit) || std::isnan(task.longitude_unit)) {
    const auto training_file = task.data.empty() ? default_era5_path() : task.data;
    const auto& spacing_of =
        std::filesystem::exists(training_file) ? read_gridded_field(training_file, {}) : field;
    if (std::isnan(task.latitude_unit)) task.latitude_unit = spacing_of.latitude_step();
    if (std::isnan(task.longitude_unit)) task.longitude_unit = spacing_of.longitude_step();
  }
  // A model trained with place features (elevation, land fraction) gets those of each cell,
  // aligned to this grid from the invariants file its task names; cells the file does not cover
  // are "no data" for it (never context, never targets). A station takes its nearest cell's.
  out.invariants = task.invariants.empty() ? default_era5_invariants_path() : task.invariants;
  const auto features =
      read_place_features(out.invariants, task.features, field, UncoveredCells::Missing);
  const int64_t dim_x = 3 + features.count();
  const auto placed = (features.count() == 0 ? torch::ones({rows, cols}, torch::kBool)
                                             : torch::isfinite(features.values).all(-1))
                          .contiguous();  // [rows, cols]: the model's features are known
  const auto* placed_cells = placed.data_ptr<bool>();
  out.cells_without_place = rows * cols - placed.sum().item<int64_t>();
  auto input_of = [&](double latitude, double longitude, int64_t cell) {
    const auto [north, east] = task.coordinates(latitude, longitude);
    std::vector<float> x = {float(north), float(east), 0.0f};
    for (int64_t f = 0; f < features.count(); ++f)
      x.push_back(float(features.values[cell / cols][cell % cols][f].item<double>()));
    return x;
  };
  auto cell_input = [&](int64_t cell) {
    return input_of(field.latitudes[size_t(cell / cols)], field.longitudes[size_t(cell % cols)],
                    cell);
  };

  out.truth = field.values[time].to(torch::kFloat64).contiguous();  // [rows, cols]
  const auto* truth_values = out.truth.data_ptr<double>();
  out.context_flag = torch::zeros({rows, cols}, torch::kFloat64);
  std::vector<ContextPoint> points;
  if (context.stations) {
    for (const auto& station : *context.stations) {
      const double la = station.latitude, lo = station.longitude, v = station.value;
      if (!std::isfinite(la) || !std::isfinite(lo) || !std::isfinite(v)) continue;
      const int64_t cell = nearest(field.latitudes, la) * cols + nearest(field.longitudes, lo);
      if (!placed_cells[cell]) {
        ++out.stations_without_place;
        continue;
      }
      points.push_back({cell, input_of(la, lo, cell), float((v - task.mean) / task.stddev)});
    }
  } else {
    std::vector<int64_t> cells;
    for (int64_t i = 0; i < rows * cols; ++i) {
      if (std::isfinite(truth_values[i]) && placed_cells[i]) cells.push_back(i);
    }
    std::mt19937_64 engine(context.seed);
    std::shuffle(cells.begin(), cells.end(), engine);
    cells.resize(size_t(std::llround(context.fraction * double(cells.size()))));
    std::sort(cells.begin(), cells.end());
    auto flags = out.context_flag.accessor<double, 2>();
    for (int64_t i : cells) {
      points.push_back({i, cell_input(i), float((truth_values[i] - task.mean) / task.stddev)});
      flags[i / cols][i % cols] = 1.0;
    }
  }
  out.num_context = static_cast<int64_t>(points.size());
  if (points.empty()) return out;

  // Every cell with a value (and the place features the model needs) is a target; the others
  // stay without a prediction.
  const int64_t side = tile > 0 ? tile : std::max(rows, cols);
  for (int64_t r0 = 0; r0 < rows; r0 += side) {
    for (int64_t c0 = 0; c0 < cols; c0 += side) {
      auto inside = [&](int64_t cell) {
        const int64_t r = cell / cols, c = cell % cols;
        return r >= r0 && r < r0 + side && c >= c0 && c < c0 + side;
      };
      GridTile part;
      for (int64_t r = r0; r < std::min(rows, r0 + side); ++r) {
        for (int64_t c = c0; c < std::min(cols, c0 + side); ++c) {
          const int64_t i = r * cols + c;
          if (std::isfinite(truth_values[i]) && placed_cells[i]) part.cells.push_back(i);
        }
      }
      if (part.cells.empty()) continue;
      std::vector<float> xc, yc, xt;
      for (const auto& point : points) {
        if (!inside(point.cell)) continue;
        xc.insert(xc.end(), point.x.begin(), point.x.end());
        yc.push_back(point.y);
      }
      for (int64_t cell : part.cells) {
        const auto x = cell_input(cell);
        xt.insert(xt.end(), x.begin(), x.end());
      }
      const auto nc = static_cast<int64_t>(yc.size());
      const auto nt = static_cast<int64_t>(part.cells.size());
      part.task.xc = torch::tensor(xc).view({1, nc, dim_x});
      part.task.yc = torch::tensor(yc).view({1, nc, 1});
      part.task.xt = torch::tensor(xt).view({1, nt, dim_x});
      out.tiles.push_back(std::move(part));
    }
  }
  return out;
}

}  // namespace npe
