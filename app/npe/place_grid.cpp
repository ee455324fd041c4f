#include "place_grid.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <torch/torch.h>

#include "model_file.h"
#include "npe/data/era5_tasks.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "npe/runtime.h"
#include "point_columns.h"
#include "terminal_progress.h"

namespace npe::cli {

int run_place_grid(const GridPlaceArguments& a) {
  const auto device = parse_device(a.device);
  const Era5TaskSource source(era5_task_of_model(a.checkpoint).reading(a.grid, a.variable));
  const auto& field = source.field();
  if (const auto choice = describe_variable_choice(field); !choice.empty())
    std::fprintf(stderr, "npe place: %s (--variable NAME reads another)\n", choice.c_str());
  // Without --time: the first hour whose window of earlier times is in the file.
  const int64_t hour = a.time.empty() ? (source.window_time_steps() - 1) * source.time_stride()
                                      : field.time_index(a.time);

  const auto table = read_point_table(a.stations, 2);
  report_warnings("npe place", table, a.stations);
  const int lat = column_named(table, a.stations, {"latitude", "lat"});
  const int lon = column_named(table, a.stations, {"longitude", "lon"});
  std::vector<LatLon> stations;
  for (const auto& row : table.rows) {
    if (std::isfinite(row[size_t(lat)]) && std::isfinite(row[size_t(lon)]))
      stations.push_back({row[size_t(lat)], row[size_t(lon)]});
  }
  const auto placed_scene = scene_for_stations(source, hour, stations, a.centre);
  const auto& scene = placed_scene.scene;
  if (placed_scene.left_out > 0) {
    std::fprintf(stderr,
                 "npe place: %lld stations left out: outside the window of %lld cells or at a "
                 "cell another station holds\n",
                 (long long)placed_scene.left_out, (long long)scene.width);
  }
  const auto built = scene_task(source, scene);

  // Targets: every cell of the window with the model's inputs; candidates: the cells a station
  // could go (held_out_index: not a station, a value at the hour, place features known).
  TaskBatch batch;
  batch.task = built.task;
  const auto with_inputs = torch::isfinite(built.task.xt[0]).all(-1).nonzero().view({-1});
  batch.task.xt = built.task.xt.index_select(1, with_inputs);
  const auto candidate_cells = built.held_out_index;
  if (candidate_cells.numel() == 0) throw DataError("no free cell with data in the window");
  const auto candidates = built.task.xt[0].index_select(0, candidate_cells);

  auto predictor = load_model_file(a.checkpoint, device);
  batch.task = batch.task.to(device);
  PlacementOptions options;
  options.count = std::min<int64_t>(a.count, candidates.size(0));
  options.candidate_batch = a.batch;
  options.score = a.score;
  const auto placed = place_showing_progress(*predictor, batch, candidates.to(device), options);

  // Scores in the file's units: a variance in its units squared, a std in its units.
  const double scale = source.output_scale();
  const double unit = options.score == AcquisitionScore::variance_reduction ? scale * scale : scale;
  PointTable out;
  out.columns = {"order", "latitude", "longitude", "row", "column", "score"};
  for (size_t k = 0; k < placed.chosen.size(); ++k) {
    const int64_t cell = candidate_cells[placed.chosen[k]].item<int64_t>();
    const int64_t row = scene.top + cell / scene.width, col = scene.left + cell % scene.width;
    out.rows.push_back({double(k + 1), field.latitudes[size_t(row)], field.longitudes[size_t(col)],
                        double(row), double(col), placed.scores[k] * unit});
  }
  write_point_table(a.out, out);
  const std::string units = field.units.empty() ? "K" : field.units;
  std::printf(
      "%s: %zu proposals from %lld free cells of the %lld x %lld window at rows %lld-%lld, "
      "columns %lld-%lld, %s, beside %zu station(s) (%s), written to %s\n",
      row_name(*predictor).c_str(), placed.chosen.size(), (long long)candidates.size(0),
      (long long)scene.width, (long long)scene.width, (long long)scene.top,
      (long long)(scene.top + scene.width - 1), (long long)scene.left,
      (long long)(scene.left + scene.width - 1),
      format_utc(field.valid_times[size_t(hour)]).c_str(), scene.stations.size(),
      options.score == AcquisitionScore::variance_reduction
          ? ("drop of the window's summed predictive variance, " + units + "²").c_str()
          : ("predictive std at the cell, " + units).c_str(),
      a.out.c_str());
  return 0;
}

Placement place_showing_progress(Predictor& predictor, const TaskBatch& batch,
                                 const torch::Tensor& candidates, PlacementOptions options) {
  // place_sensors reports candidates scored over all rounds (one per round for the std score).
  const int64_t total = options.score == AcquisitionScore::variance_reduction
                            ? options.count * candidates.size(0)
                            : options.count;
  TerminalProgress bar("place " + row_name(predictor), total);
  options.progress = [&bar](const Progress& p) {
    bar.update(p.done);
    return true;
  };
  auto placed = place_sensors(predictor, batch, candidates, options);
  bar.finish();
  return placed;
}

}  // namespace npe::cli
