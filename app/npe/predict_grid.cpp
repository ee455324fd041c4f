#include "predict_grid.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <vector>

#include <torch/torch.h>

#include "model_file.h"
#include "npe/data/era5_tasks.h"
#include "npe/data/gridded_field.h"
#include "npe/data/gridded_writer.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/prediction.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"
#include "point_columns.h"

namespace npe::cli {
namespace {

// How well the prediction matches the grid's own values at the cells that were not context:
// log-likelihood per cell in the data's units and in the model's standardised units, RMSE and
// the coverage of the central 90 % interval.
void print_held_out_summary(const torch::Tensor& truth, const torch::Tensor& context_flag,
                            const torch::Tensor& targets, const torch::Tensor& mean,
                            const torch::Tensor& stddev, double output_scale,
                            const std::string& units) {
  const auto held = targets.index({context_flag.index({targets}) == 0});
  if (held.numel() == 0) return;
  const auto y = truth.index({held}), m = mean.index({held}), s = stddev.index({held});
  const auto z = (y - m) / s;
  const double ll = gaussian_log_density(y, m, s).mean().item<double>();
  const double rmse = (y - m).square().mean().sqrt().item<double>();
  const double coverage =
      (z.abs() <= central_interval_quantile(0.9)).to(torch::kDouble).mean().item<double>();
  const auto unit = units.empty() ? std::string("unit") : units;
  std::printf(
      "held-out cells %lld: log-likelihood %.4f nats per cell in %s (%.4f in the model's "
      "standardised units), RMSE %.3f %s, 90%% interval coverage %.3f\n",
      static_cast<long long>(held.numel()), ll, unit.c_str(), ll + std::log(output_scale), rmse,
      unit.c_str(), coverage);
}

}  // namespace

int run_predict_grid(const GridPredictArguments& a) {
  const auto training_task = era5_task_of_model(a.checkpoint);
  GriddedReadOptions options;
  options.variable = a.variable;
  const auto field = read_gridded_field(a.grid, options);
  const int64_t t = field.time_index(a.time);
  const int64_t rows = field.num_latitudes(), cols = field.num_longitudes();
  // The model's inputs are in units of its training grid's spacing north of the split latitude
  // and east of the origin longitude (Era5TaskConfig::coordinates), so a grid of another
  // resolution is seen at its true distances.
  auto task = training_task;
  // Standardising with the mean moved into the file's units reads and writes °C files as they
  // are (the model itself works in kelvin).
  task.mean -= kelvin_offset(field.units);
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
  const auto features = read_place_features(
      task.invariants.empty() ? default_era5_invariants_path() : task.invariants, task.features,
      field, UncoveredCells::Missing);
  const int64_t dim_x = 3 + features.count();
  const auto placed = (features.count() == 0 ? torch::ones({rows, cols}, torch::kBool)
                                             : torch::isfinite(features.values).all(-1))
                          .contiguous();  // [rows, cols]: the model's features are known
  const auto* placed_cells = placed.data_ptr<bool>();
  auto nearest = [](const std::vector<double>& axis, double value) {
    int64_t best = 0;
    for (size_t i = 1; i < axis.size(); ++i)
      if (std::abs(axis[i] - value) < std::abs(axis[size_t(best)] - value)) best = int64_t(i);
    return best;
  };
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

  const auto truth = field.values[t].to(torch::kFloat64).contiguous();  // [rows, cols]
  const auto* truth_values = truth.data_ptr<double>();
  auto context_flag = torch::zeros({rows, cols}, torch::kFloat64);
  struct ContextPoint {
    int64_t cell;
    std::vector<float> x;
    float y;
  };
  std::vector<ContextPoint> context;
  int64_t stations_without_place = 0;
  if (!a.stations.empty()) {
    const auto table = read_point_table(a.stations, 3);
    const int lat = column_named(table, a.stations, {"latitude", "lat"});
    const int lon = column_named(table, a.stations, {"longitude", "lon"});
    const int value = column_named(table, a.stations, {"value", "y"});
    for (const auto& row : table.rows) {
      const double la = row[size_t(lat)], lo = row[size_t(lon)], v = row[size_t(value)];
      if (!std::isfinite(la) || !std::isfinite(lo) || !std::isfinite(v)) continue;
      const int64_t cell = nearest(field.latitudes, la) * cols + nearest(field.longitudes, lo);
      if (!placed_cells[cell]) {
        ++stations_without_place;
        continue;
      }
      context.push_back({cell, input_of(la, lo, cell), float((v - task.mean) / task.stddev)});
    }
  } else {
    std::vector<int64_t> cells;
    for (int64_t i = 0; i < rows * cols; ++i) {
      if (std::isfinite(truth_values[i]) && placed_cells[i]) cells.push_back(i);
    }
    std::mt19937_64 engine(a.seed);
    std::shuffle(cells.begin(), cells.end(), engine);
    cells.resize(size_t(std::llround(a.context_fraction * double(cells.size()))));
    std::sort(cells.begin(), cells.end());
    auto flags = context_flag.accessor<double, 2>();
    for (int64_t i : cells) {
      context.push_back({i, cell_input(i), float((truth_values[i] - task.mean) / task.stddev)});
      flags[i / cols][i % cols] = 1.0;
    }
  }
  if (stations_without_place > 0) {
    std::fprintf(stderr,
                 "npe predict: %lld stations skipped: no elevation or land fraction at their "
                 "cells\n",
                 static_cast<long long>(stations_without_place));
  }
  if (context.empty()) {
    throw DataError("no context: " + (a.stations.empty()
                                          ? std::string("--context-fraction selects no cell")
                                          : a.stations + " has no station with finite values"));
  }
  const auto num_context = static_cast<int64_t>(context.size());

  // Every cell with a value (and the place features the model needs) is a target; the others
  // stay NaN. With tiles, each tile is one task: its context points and its cells, as the model
  // saw windows of its training size; without, the whole grid is one task.
  const int64_t tile = a.tile > 0 ? a.tile : std::max(rows, cols);
  auto predictor = load_model_file(a.checkpoint, parse_device(a.device));
  auto mean = torch::full({rows * cols}, std::nan(""), torch::kFloat64);
  auto stddev = torch::full({rows * cols}, std::nan(""), torch::kFloat64);
  std::vector<int64_t> all_targets;
  for (int64_t r0 = 0; r0 < rows; r0 += tile) {
    for (int64_t c0 = 0; c0 < cols; c0 += tile) {
      auto inside = [&](int64_t cell) {
        const int64_t r = cell / cols, c = cell % cols;
        return r >= r0 && r < r0 + tile && c >= c0 && c < c0 + tile;
      };
      std::vector<float> xc, yc;
      for (const auto& point : context) {
        if (!inside(point.cell)) continue;
        xc.insert(xc.end(), point.x.begin(), point.x.end());
        yc.push_back(point.y);
      }
      std::vector<int64_t> targets;
      for (int64_t r = r0; r < std::min(rows, r0 + tile); ++r) {
        for (int64_t c = c0; c < std::min(cols, c0 + tile); ++c) {
          const int64_t i = r * cols + c;
          if (std::isfinite(truth_values[i]) && placed_cells[i]) targets.push_back(i);
        }
      }
      if (targets.empty()) continue;
      const auto nc = static_cast<int64_t>(yc.size());
      Task context_task;
      context_task.xc = torch::tensor(xc).view({1, nc, dim_x});
      context_task.yc = torch::tensor(yc).view({1, nc, 1});
      for (size_t begin = 0; begin < targets.size(); begin += size_t(a.chunk)) {
        const size_t end = std::min(targets.size(), begin + size_t(a.chunk));
        std::vector<float> xt;
        for (size_t k = begin; k < end; ++k) {
          const auto x = cell_input(targets[k]);
          xt.insert(xt.end(), x.begin(), x.end());
        }
        TaskBatch batch;
        batch.task = context_task;
        batch.task.xt = torch::tensor(xt).view({1, int64_t(end - begin), dim_x});
        const auto p = predictor->predict(batch);
        const auto index = torch::tensor(
            std::vector<int64_t>(targets.begin() + long(begin), targets.begin() + long(end)));
        mean.index_put_({index},
                        p.mean[0].select(-1, 0).to(torch::kFloat64) * task.stddev + task.mean);
        stddev.index_put_({index}, p.stddev[0].select(-1, 0).to(torch::kFloat64) * task.stddev);
      }
      all_targets.insert(all_targets.end(), targets.begin(), targets.end());
    }
  }
  const auto targets = torch::tensor(all_targets, torch::kLong);
  if (!torch::isfinite(mean.index({targets})).all().item<bool>()) {
    throw DataError(predictor->info().display_name + " produced non-finite values for this grid");
  }
  if (a.stations.empty())
    print_held_out_summary(truth.view({-1}), context_flag.view({-1}), targets, mean, stddev,
                           task.stddev, field.units);
  const int64_t uncovered = rows * cols - placed.sum().item<int64_t>();
  if (uncovered > 0) {
    std::fprintf(stderr,
                 "npe predict: %lld cells without elevation or land fraction in %s are left "
                 "without a prediction\n",
                 static_cast<long long>(uncovered),
                 (task.invariants.empty() ? default_era5_invariants_path() : task.invariants)
                     .filename()
                     .c_str());
  }

  GridOutput out;
  out.latitudes = field.latitudes;
  out.longitudes = field.longitudes;
  out.valid_time = field.valid_times[size_t(t)];
  const std::string units = field.units.empty() ? "K" : field.units;
  out.variables = {
      {"mean", "predictive mean of " + field.variable, units, "air_temperature",
       mean.view({rows, cols})},
      {"std", "predictive standard deviation of " + field.variable, units, "",
       stddev.view({rows, cols})},
      {"truth", field.long_name.empty() ? field.variable : field.long_name, units,
       "air_temperature", truth},
      {"context", "1 where the cell's value was given to the model as context", "1", "",
       context_flag},
  };
  if (!a.stations.empty()) out.variables.pop_back();  // stations are not cells of the grid
  out.title = predictor->info().display_name + " prediction of " + field.variable;
  out.source = "NP Explorer npe predict, checkpoint " +
               std::filesystem::path(a.checkpoint).filename().string();
  out.history = "npe predict --grid " + std::filesystem::path(a.grid).filename().string() + " (" +
                std::to_string(num_context) + " context points, time " +
                format_utc(out.valid_time) +
                (a.tile > 0 ? ", tiles of " + std::to_string(a.tile) + " cells" : "") + ")";
  write_grid_netcdf(a.out, out);
  std::printf("%s: %zu cells from %lld context points at %s, written to %s\n",
              predictor->info().display_name.c_str(), all_targets.size(),
              static_cast<long long>(num_context), format_utc(out.valid_time).c_str(),
              a.out.c_str());
  return 0;
}

}  // namespace npe::cli
