#include "predict_grid.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <vector>

#include <torch/torch.h>

#include "npe/data/era5_tasks.h"
#include "npe/data/gridded_field.h"
#include "npe/data/gridded_writer.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"

namespace npe::cli {
namespace {

// The index of the file's time given as "YYYY-MM-DDTHH:MM" (or with a space), or 0 when none is.
int64_t time_index(const GriddedField& field, const std::string& time) {
  if (time.empty()) return 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0;
  char separator = 0;
  if (std::sscanf(time.c_str(), "%d-%d-%d%c%d:%d", &year, &month, &day, &separator, &hour,
                  &minute) != 6 ||
      (separator != 'T' && separator != ' ')) {
    throw DataError("--time '" + time + "': expected YYYY-MM-DDTHH:MM (UTC)");
  }
  const auto wanted = utc_seconds(year, month, day, hour, minute);
  for (size_t i = 0; i < field.valid_times.size(); ++i) {
    if (field.valid_times[i] == wanted) return static_cast<int64_t>(i);
  }
  throw DataError(field.source.string() + " has no time " + format_utc(wanted) + " (it has " +
                  std::to_string(field.valid_times.size()) + ", from " +
                  format_utc(field.valid_times.front()) + ")");
}

int column_named(const PointTable& table, const std::string& file,
                 std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const int index = table.column_index(name); index >= 0) return index;
  }
  throw DataError(file + ": no column named " + *names.begin());
}

}  // namespace

int run_predict_grid(const GridPredictArguments& a) {
  const auto metadata = read_checkpoint_metadata(a.checkpoint);
  if (metadata.task.value("kind", std::string()) != "era5") {
    throw DataError("--grid needs a model trained on gridded temperatures (an ERA5 task); '" +
                    a.checkpoint + "' was trained on " +
                    metadata.task.value("name", std::string("?")));
  }
  const auto task = Era5TaskConfig::from_json(metadata.task);
  if (!std::isfinite(task.mean) || !std::isfinite(task.stddev) ||
      !std::isfinite(task.origin_longitude)) {
    throw DataError(a.checkpoint + ": its task has no standardisation or coordinate origin");
  }
  GriddedReadOptions options;
  options.variable = a.variable;
  const auto field = read_gridded_field(a.grid, options);
  const int64_t t = time_index(field, a.time);
  const int64_t rows = field.num_latitudes(), cols = field.num_longitudes();
  const double dlat = rows > 1 ? field.latitude_step() : 0.25;
  const double dlon = cols > 1 ? field.longitude_step() : 0.25;

  // The model's inputs are in cells of its training grid north of the split latitude and east
  // of the origin longitude (Era5TaskSource::inputs); a grid of another spacing is read as if its
  // cells were the training grid's.
  const auto training_file = task.data.empty() ? default_era5_path() : task.data;
  if (std::filesystem::exists(training_file)) {
    const auto training = read_gridded_field(training_file, {});
    if (std::abs(training.latitude_step() - dlat) > 1e-6 ||
        std::abs(training.longitude_step() - dlon) > 1e-6) {
      std::fprintf(stderr,
                   "npe predict: warning: %s has a %g° x %g° grid, the model was trained on "
                   "%g° x %g° cells; it sees this grid's cells as its own\n",
                   a.grid.c_str(), dlat, dlon, training.latitude_step(), training.longitude_step());
    }
  }
  // A model trained with place features (elevation, land fraction) gets those of each cell,
  // aligned to this grid from the invariants file its task names; a station takes its nearest
  // cell's.
  const auto features = read_place_features(
      task.invariants.empty() ? default_era5_invariants_path() : task.invariants, task.features,
      field);
  const int64_t dim_x = 3 + features.count();
  auto nearest = [](const std::vector<double>& axis, double value) {
    int64_t best = 0;
    for (size_t i = 1; i < axis.size(); ++i)
      if (std::abs(axis[i] - value) < std::abs(axis[size_t(best)] - value)) best = int64_t(i);
    return best;
  };
  auto input_of = [&](double latitude, double longitude) {
    std::vector<float> x = {float((latitude - task.split_latitude) / dlat),
                            float((longitude - task.origin_longitude) / dlon), 0.0f};
    if (features.count() > 0) {
      const auto cell =
          features.values[nearest(field.latitudes, latitude)][nearest(field.longitudes, longitude)];
      for (int64_t f = 0; f < features.count(); ++f) x.push_back(cell[f].item<float>());
    }
    return x;
  };

  const auto truth = field.values[t].to(torch::kFloat64).contiguous();  // [rows, cols]
  const auto* truth_values = truth.data_ptr<double>();
  auto context_flag = torch::zeros({rows, cols}, torch::kFloat64);
  std::vector<float> xc, yc;
  if (!a.stations.empty()) {
    const auto table = read_point_table(a.stations, 3);
    const int lat = column_named(table, a.stations, {"latitude", "lat"});
    const int lon = column_named(table, a.stations, {"longitude", "lon"});
    const int value = column_named(table, a.stations, {"value", "y"});
    for (const auto& row : table.rows) {
      const double la = row[size_t(lat)], lo = row[size_t(lon)], v = row[size_t(value)];
      if (!std::isfinite(la) || !std::isfinite(lo) || !std::isfinite(v)) continue;
      const auto x = input_of(la, lo);
      xc.insert(xc.end(), x.begin(), x.end());
      yc.push_back(float((v - task.mean) / task.stddev));
    }
  } else {
    std::vector<int64_t> cells;
    for (int64_t i = 0; i < rows * cols; ++i) {
      if (std::isfinite(truth_values[i])) cells.push_back(i);
    }
    std::mt19937_64 engine(a.seed);
    std::shuffle(cells.begin(), cells.end(), engine);
    cells.resize(size_t(std::llround(a.context_fraction * double(cells.size()))));
    std::sort(cells.begin(), cells.end());
    auto flags = context_flag.accessor<double, 2>();
    for (int64_t i : cells) {
      const auto x =
          input_of(field.latitudes[size_t(i / cols)], field.longitudes[size_t(i % cols)]);
      xc.insert(xc.end(), x.begin(), x.end());
      yc.push_back(float((truth_values[i] - task.mean) / task.stddev));
      flags[i / cols][i % cols] = 1.0;
    }
  }
  if (yc.empty()) {
    throw DataError("no context: " + (a.stations.empty()
                                          ? std::string("--context-fraction selects no cell")
                                          : a.stations + " has no station with finite values"));
  }
  const auto num_context = static_cast<int64_t>(yc.size());
  Task context_task;
  context_task.xc = torch::tensor(xc).view({1, num_context, dim_x});
  context_task.yc = torch::tensor(yc).view({1, num_context, 1});

  // Every cell with a value is a target; cells without one stay NaN.
  std::vector<int64_t> targets;
  for (int64_t i = 0; i < rows * cols; ++i) {
    if (std::isfinite(truth_values[i])) targets.push_back(i);
  }
  auto predictor = load_predictor(a.checkpoint, parse_device(a.device));
  auto mean = torch::full({rows * cols}, std::nan(""), torch::kFloat64);
  auto stddev = torch::full({rows * cols}, std::nan(""), torch::kFloat64);
  for (size_t begin = 0; begin < targets.size(); begin += size_t(a.chunk)) {
    const size_t end = std::min(targets.size(), begin + size_t(a.chunk));
    std::vector<float> xt;
    for (size_t k = begin; k < end; ++k) {
      const int64_t i = targets[k];
      const auto x =
          input_of(field.latitudes[size_t(i / cols)], field.longitudes[size_t(i % cols)]);
      xt.insert(xt.end(), x.begin(), x.end());
    }
    TaskBatch batch;
    batch.task = context_task;
    batch.task.xt = torch::tensor(xt).view({1, int64_t(end - begin), dim_x});
    const auto p = predictor->predict(batch);
    const auto index = torch::tensor(
        std::vector<int64_t>(targets.begin() + long(begin), targets.begin() + long(end)));
    mean.index_put_({index}, p.mean[0].select(-1, 0).to(torch::kFloat64) * task.stddev + task.mean);
    stddev.index_put_({index}, p.stddev[0].select(-1, 0).to(torch::kFloat64) * task.stddev);
  }
  if (!torch::isfinite(mean.index({torch::tensor(targets)})).all().item<bool>()) {
    throw DataError(predictor->info().display_name + " produced non-finite values for this grid");
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
                format_utc(out.valid_time) + ")";
  write_grid_netcdf(a.out, out);
  std::printf("%s: %zu cells from %lld context points at %s, written to %s\n",
              predictor->info().display_name.c_str(), targets.size(),
              static_cast<long long>(num_context), format_utc(out.valid_time).c_str(),
              a.out.c_str());
  return 0;
}

}  // namespace npe::cli
