#include "predict_grid.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <torch/torch.h>

#include "model_file.h"
#include "npe/data/era5_tasks.h"
#include "npe/data/grid_prediction.h"
#include "npe/data/gridded_field.h"
#include "npe/data/gridded_writer.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "npe/ground/prediction.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/chunked_prediction.h"
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
  if (const auto choice = describe_variable_choice(field); !choice.empty())
    std::fprintf(stderr, "npe predict: %s (--variable NAME reads another)\n", choice.c_str());
  const int64_t t = field.time_index(a.time);
  const int64_t rows = field.num_latitudes(), cols = field.num_longitudes();
  GridContext context;
  context.fraction = a.context_fraction;
  context.seed = a.seed;
  if (!a.stations.empty()) {
    context.stations.emplace();
    const auto table = read_point_table(a.stations, 3);
    const int lat = column_named(table, a.stations, {"latitude", "lat"});
    const int lon = column_named(table, a.stations, {"longitude", "lon"});
    const int value = column_named(table, a.stations, {"value", "y"});
    for (const auto& row : table.rows) {
      context.stations->push_back({row[size_t(lat)], row[size_t(lon)], row[size_t(value)]});
    }
  }
  const auto grid = grid_prediction(training_task, field, t, context, a.tile);
  if (grid.stations_without_place > 0) {
    std::fprintf(stderr,
                 "npe predict: %lld stations skipped: no elevation or land fraction at their "
                 "cells\n",
                 static_cast<long long>(grid.stations_without_place));
  }
  if (grid.num_context == 0) {
    throw DataError("no context: " + (a.stations.empty()
                                          ? std::string("--context-fraction selects no cell")
                                          : a.stations + " has no station with finite values"));
  }

  // Each tile's targets in chunks (bounded memory, the same numbers).
  auto predictor = load_model_file(a.checkpoint, parse_device(a.device));
  auto mean = torch::full({rows * cols}, std::nan(""), torch::kFloat64);
  auto stddev = torch::full({rows * cols}, std::nan(""), torch::kFloat64);
  std::vector<int64_t> all_targets;
  for (const auto& tile : grid.tiles) {
    const auto [m, s] = grid.in_grid_units(predict_in_chunks(*predictor, tile.task, a.chunk));
    const auto index = torch::tensor(tile.cells, torch::kLong);
    mean.index_put_({index}, m);
    stddev.index_put_({index}, s);
    all_targets.insert(all_targets.end(), tile.cells.begin(), tile.cells.end());
  }
  const auto targets = torch::tensor(all_targets, torch::kLong);
  if (!torch::isfinite(mean.index({targets})).all().item<bool>()) {
    throw DataError(predictor->info().display_name + " produced non-finite values for this grid");
  }
  const auto& truth = grid.truth;
  const auto& context_flag = grid.context_flag;
  const int64_t num_context = grid.num_context;
  if (a.stations.empty())
    print_held_out_summary(truth.view({-1}), context_flag.view({-1}), targets, mean, stddev,
                           grid.task.stddev, field.units);
  if (grid.cells_without_place > 0) {
    std::fprintf(stderr,
                 "npe predict: %lld cells without elevation or land fraction in %s are left "
                 "without a prediction\n",
                 static_cast<long long>(grid.cells_without_place),
                 grid.invariants.filename().c_str());
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
