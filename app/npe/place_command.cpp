// npe place: where a model would observe next. Greedy sensor placement (Andersson et al. 2023)
// over candidate places, by the model's own predictive variance (npe/predictors/
// sensor_placement.h); for the GP baselines the exact variance reduction.

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "baseline_options.h"
#include "commands.h"
#include "model_file.h"
#include "npe/data/point_table.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/predictors/sensor_placement.h"
#include "npe/runtime.h"
#include "option_values.h"
#include "place_grid.h"
#include "point_columns.h"

namespace npe::cli {
namespace {

struct PlaceArguments {
  std::optional<std::string> checkpoint;
  BaselineArguments baseline;
  std::string context, candidates, targets, out;
  // --grid: stations in a window of a gridded field (place_grid.h).
  std::string grid, variable, time, stations, centre;
  int64_t count = 1;
  int64_t batch = 64;
  std::string score = "variance";
  std::string device = "cpu";
  RuntimeArguments runtime;
};

// The finite rows of a table's x columns (and y columns when `y` is set), [N, D] float64.
torch::Tensor finite_rows(const std::string& file, bool outputs, int64_t dim, const char* what,
                          torch::Tensor* y = nullptr, int64_t dim_y = 0) {
  const auto table = read_point_table(file, outputs ? 2 : 1);
  report_warnings("npe place", table, file);
  const auto cx = variable_columns(table, "x", "", file);
  if (int64_t(cx.size()) != dim) {
    throw DataError(file + ": " + std::to_string(cx.size()) + " input columns (x, or x1, x2, " +
                    "...), the model takes " + std::to_string(dim));
  }
  std::vector<bool> ok_x, ok_y;
  const auto x = gather(table, cx, ok_x);
  torch::Tensor values;
  if (outputs) {
    const auto cy = variable_columns(table, "y", "", file);
    if (int64_t(cy.size()) != dim_y) {
      throw DataError(file + ": " + std::to_string(cy.size()) + " output columns (y, or y1, " +
                      "y2, ...), the model gives " + std::to_string(dim_y));
    }
    values = gather(table, cy, ok_y);
    for (size_t i = 0; i < ok_x.size(); ++i) ok_x[i] = ok_x[i] && ok_y[i];
  }
  int64_t kept = 0;
  for (bool ok : ok_x) kept += ok ? 1 : 0;
  if (kept < int64_t(ok_x.size())) {
    std::fprintf(stderr, "npe place: %s: %lld %s rows with NaN or infinite values left out\n",
                 file.c_str(), (long long)(int64_t(ok_x.size()) - kept), what);
  }
  if (y) *y = rows_where(values, ok_x);
  return rows_where(x, ok_x);
}

AcquisitionScore score_named(const std::string& name) {
  return name == "std" ? AcquisitionScore::predictive_std : AcquisitionScore::variance_reduction;
}

int run_place_on_grid(const PlaceArguments& a) {
  if (!a.checkpoint) {
    throw ConfigError(
        "npe place --grid needs --checkpoint: a model trained on gridded temperatures (its "
        "statistics, inputs and window)");
  }
  if (!a.context.empty() || !a.candidates.empty() || !a.targets.empty()) {
    throw ConfigError(
        "npe place: --grid takes --stations, not --context, --candidates or --targets");
  }
  GridPlaceArguments grid;
  grid.checkpoint = *a.checkpoint;
  grid.grid = a.grid;
  grid.variable = a.variable;
  grid.time = a.time;
  grid.stations = a.stations;
  if (!a.centre.empty()) {
    const auto values = parse_numbers(a.centre, "--centre");
    if (values.size() != 2 || !std::isfinite(values[0]) || !std::isfinite(values[1])) {
      throw ConfigError("--centre '" + a.centre + "': expected LATITUDE,LONGITUDE in degrees");
    }
    grid.centre = LatLon{values[0], values[1]};
  }
  grid.count = a.count;
  grid.batch = a.batch;
  grid.score = score_named(a.score);
  grid.device = a.device;
  grid.out = a.out;
  return run_place_grid(grid);
}

int run_place(const PlaceArguments& a) {
  apply_runtime_options(a.runtime);
  if (!a.grid.empty()) return run_place_on_grid(a);
  if (a.context.empty() || a.candidates.empty()) {
    throw ConfigError("npe place needs --context and --candidates, or --grid and --stations");
  }
  if (!a.stations.empty() || !a.centre.empty() || !a.time.empty() || !a.variable.empty()) {
    throw ConfigError("npe place: --stations, --centre, --time and --variable go with --grid");
  }
  const auto device = parse_device(a.device);
  // Plain variables, not a structured binding: C++17 lambdas cannot capture those (clang).
  auto chosen = point_predictor("place", a.checkpoint, a.baseline, device);
  auto predictor = std::move(chosen.predictor);
  int64_t dim_x = chosen.dim_x, dim_y = chosen.dim_y;
  if (dim_x < 0) {
    // A baseline takes the dimensions of the context file.
    const auto table = read_point_table(a.context);
    dim_x = int64_t(variable_columns(table, "x", "", a.context).size());
    dim_y = int64_t(variable_columns(table, "y", "", a.context).size());
  }
  torch::Tensor yc;
  const auto xc = finite_rows(a.context, true, dim_x, "context", &yc, dim_y);
  const auto candidates = finite_rows(a.candidates, false, dim_x, "candidate");
  const auto targets =
      a.targets.empty() ? candidates : finite_rows(a.targets, false, dim_x, "target");
  if (candidates.size(0) == 0) throw DataError(a.candidates + ": no candidate places");

  TaskBatch batch;
  batch.task = {xc.unsqueeze(0), yc.unsqueeze(0).to(torch::kFloat32), targets.unsqueeze(0), {}};
  PlacementOptions options;
  options.count = a.count;
  options.candidate_batch = a.batch;
  options.score = score_named(a.score);
  // A GP baseline's variance reduction is known in closed form from its joint predictive (a
  // fitted GP would otherwise refit its kernel to every pseudo-observation).
  const bool exact = !a.checkpoint && options.score == AcquisitionScore::variance_reduction;
  const auto placed = exact ? exact_gp_placement(*predictor, batch, candidates, a.count)
                            : place_showing_progress(*predictor, batch, candidates, options);

  PointTable out;
  out.columns.push_back("order");
  for (int64_t d = 0; d < dim_x; ++d)
    out.columns.push_back(dim_x == 1 ? "x" : "x" + std::to_string(d + 1));
  out.columns.push_back("score");
  for (size_t k = 0; k < placed.chosen.size(); ++k) {
    std::vector<double> row{double(k + 1)};
    for (int64_t d = 0; d < dim_x; ++d)
      row.push_back(candidates[placed.chosen[k]][d].item<double>());
    row.push_back(placed.scores[k]);
    out.rows.push_back(row);
  }
  write_point_table(a.out, out);
  std::printf("%s: %zu proposals from %lld candidates (%s), written to %s\n",
              row_name(*predictor).c_str(), placed.chosen.size(), (long long)candidates.size(0),
              options.score == AcquisitionScore::variance_reduction
                  ? "drop of the targets' summed predictive variance"
                  : "predictive std at the candidate",
              a.out.c_str());
  return 0;
}

}  // namespace

Command add_place_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "place",
      "Where to observe next: greedy sensor placement by the model's own predictive variance "
      "(Andersson et al. 2023), over candidate places or the free cells of a grid's window");
  command->footer(
      "\nEach round scores every candidate by how much observing it (with the model's own mean\n"
      "there as its value) would lower the summed predictive variance at the targets, places\n"
      "the best and continues from the context with it. For a GP the drop does not depend on\n"
      "the value: for the GP baselines (--model) it is computed exactly from their joint\n"
      "predictive. Writes order, x (or x1, x2, ...), score.\n\n"
      "With --grid (a model trained on ERA5): the stations are the grid cells nearest to\n"
      "--stations' latitude/longitude rows, observed at the window's times from the grid itself,\n"
      "as in the Maps tab; the candidates are the window's other cells with a value, the targets\n"
      "all its cells. Writes order, latitude, longitude, row, column, score (the file's units).");
  auto a = std::make_shared<PlaceArguments>();
  auto* checkpoint =
      command->add_option("--checkpoint", a->checkpoint, "Trained model or TorchScript model");
  add_baseline_options(*command, a->baseline, checkpoint);
  command->add_option("--context", a->context,
                      "Context: a delimited text file with inputs x (or x1, x2, ...) and outputs y "
                      "(or y1, ...)");
  command->add_option("--candidates", a->candidates, "Places that could be observed (x columns)");
  command->add_option("--targets", a->targets,
                      "Places whose uncertainty counts (x columns; default: the candidates)");
  command->add_option("--grid", a->grid,
                      "Gridded field (NetCDF or GRIB) to place stations in, instead of --context");
  command->add_option(
      "--variable", a->variable,
      "With --grid: the variable (default: the only one, or the first in a temperature unit)");
  command->add_option("--time", a->time,
                      "With --grid: the hour, YYYY-MM-DDTHH:MM UTC (default: the first with the "
                      "model's window of earlier times)");
  command->add_option("--stations", a->stations,
                      "With --grid: stations already there, a CSV with latitude and longitude");
  command->add_option("--centre", a->centre,
                      "With --grid: the window's centre LATITUDE,LONGITUDE (default: the "
                      "stations' middle)");
  command->add_option("--count", a->count, "Proposals, placed greedily")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->capture_default_str();
  command
      ->add_option("--score", a->score,
                   "variance (reduction at the targets) or std (at the "
                   "candidate: one forward per round)")
      ->check(CLI::IsMember({"variance", "std"}))
      ->capture_default_str();
  command->add_option("--batch", a->batch, "Candidates per batched forward")
      ->check(CLI::Range(int64_t{1}, int64_t{65536}))
      ->capture_default_str();
  command->add_option("--out", a->out, "CSV of the proposals (atomically)")->required();
  command->add_option("--device", a->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  add_thread_option(*command, a->runtime);
  return {command, [a] { return run_place(*a); }};
}

}  // namespace npe::cli
