#include "npe/data/era5_scene.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

Era5SceneTask scene_task(const Era5TaskSource& source, const Era5Scene& scene) {
  const auto& field = source.field();
  const int64_t w = scene.width, steps = source.window_time_steps(), stride = source.time_stride();
  if (w < 1 || scene.top < 0 || scene.left < 0 || scene.top + w > field.num_latitudes() ||
      scene.left + w > field.num_longitudes()) {
    throw DataError("the window of " + std::to_string(w) + " cells at (" +
                    std::to_string(scene.top) + ", " + std::to_string(scene.left) +
                    ") is outside the field");
  }
  if (scene.hour - (steps - 1) * stride < 0 || scene.hour >= field.num_times()) {
    throw DataError("hour " + std::to_string(scene.hour) + " has no window of " +
                    std::to_string(steps) + " times in the field");
  }
  const auto values = field.values.accessor<float, 3>();
  const auto usable = source.usable_cells().accessor<bool, 2>();
  std::vector<int64_t> rows, cols, step_index;
  std::vector<double> yc;
  std::vector<uint8_t> is_station(static_cast<size_t>(w * w), 0);
  for (size_t i = 0; i < scene.noise.size() && i < scene.stations.size(); ++i) {
    const auto& noise = scene.noise[i];
    if (int64_t(noise.size()) != steps ||
        !std::all_of(noise.begin(), noise.end(), [](double v) { return std::isfinite(v); })) {
      throw DataError("station " + std::to_string(i) + "'s noise must be " + std::to_string(steps) +
                      " finite values, one per time of the window");
    }
  }
  for (size_t i = 0; i < scene.stations.size(); ++i) {
    const auto [row, col] = scene.stations[i];
    if (row < 0 || col < 0 || row >= w || col >= w) {
      throw DataError("a station at (" + std::to_string(row) + ", " + std::to_string(col) +
                      ") is outside the window");
    }
    is_station[static_cast<size_t>(row * w + col)] = 1;
    const int64_t r = scene.top + row, c = scene.left + col;
    if (!usable[r][c]) continue;  // no place features there: no observation
    for (int64_t k = 0; k < steps; ++k) {
      const float v = values[scene.hour - (steps - 1 - k) * stride][r][c];
      if (!std::isfinite(v)) continue;  // a missing reading is no observation
      rows.push_back(r);
      cols.push_back(c);
      step_index.push_back(k);
      yc.push_back(double(v) + (i < scene.noise.size() ? scene.noise[i][size_t(k)] : 0.0));
    }
  }
  auto long_tensor = [](const std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong); };
  const auto dim_x = source.dim_x();
  const auto xc = source.inputs(long_tensor(rows), long_tensor(cols), long_tensor(step_index));
  const auto yct =
      source.standardise(torch::tensor(yc, torch::kFloat64).view({-1, 1})).to(torch::kFloat32);
  const auto cells = torch::arange(w * w, torch::kLong);
  const auto target_rows = cells.div(w, "floor") + scene.top;
  const auto target_cols = cells.remainder(w) + scene.left;
  const auto xt =
      source.inputs(target_rows, target_cols, torch::full({w * w}, steps - 1, torch::kLong));
  std::vector<int64_t> held;
  std::vector<double> held_values;
  for (int64_t i = 0; i < w * w; ++i) {
    const int64_t r = scene.top + i / w, c = scene.left + i % w;
    const float v = values[scene.hour][r][c];
    if (!is_station[static_cast<size_t>(i)] && std::isfinite(v) && usable[r][c]) {
      held.push_back(i);
      held_values.push_back(v);
    }
  }
  Era5SceneTask result;
  result.task = {xc.view({1, -1, dim_x}), yct.view({1, -1, 1}), xt.view({1, -1, dim_x}), {}};
  result.held_out_index = long_tensor(held);
  result.held_out_y = source.standardise(torch::tensor(held_values, torch::kFloat64))
                          .to(torch::kFloat32)
                          .view({-1, 1});
  return result;
}

namespace {

int64_t nearest_index(const std::vector<double>& axis, double value) {
  int64_t best = 0;
  for (size_t i = 1; i < axis.size(); ++i) {
    if (std::abs(axis[i] - value) < std::abs(axis[size_t(best)] - value)) best = int64_t(i);
  }
  return best;
}

}  // namespace

StationScene scene_for_stations(const Era5TaskSource& source, int64_t hour,
                                const std::vector<LatLon>& stations, std::optional<LatLon> centre) {
  const auto& field = source.field();
  const int64_t w = source.config().window;
  if (field.num_latitudes() < w || field.num_longitudes() < w) {
    throw DataError(field.source.string() + ": a grid of " + std::to_string(field.num_latitudes()) +
                    " x " + std::to_string(field.num_longitudes()) + " cells is smaller than the " +
                    "model's window of " + std::to_string(w) + " x " + std::to_string(w));
  }
  std::vector<std::pair<int64_t, int64_t>> cells;  // (row, column) in the field
  for (const auto& s : stations) {
    cells.emplace_back(nearest_index(field.latitudes, s.latitude),
                       nearest_index(field.longitudes, s.longitude));
  }
  int64_t centre_row = field.num_latitudes() / 2, centre_col = field.num_longitudes() / 2;
  if (centre) {
    centre_row = nearest_index(field.latitudes, centre->latitude);
    centre_col = nearest_index(field.longitudes, centre->longitude);
  } else if (!cells.empty()) {
    // The middle of the stations' extent, not their mean: a cluster does not pull the window
    // off the others.
    const auto [row_low, row_high] = std::minmax_element(
        cells.begin(), cells.end(), [](auto& a, auto& b) { return a.first < b.first; });
    const auto [col_low, col_high] = std::minmax_element(
        cells.begin(), cells.end(), [](auto& a, auto& b) { return a.second < b.second; });
    centre_row = (row_low->first + row_high->first) / 2;
    centre_col = (col_low->second + col_high->second) / 2;
  }
  StationScene result;
  result.scene.hour = hour;
  result.scene.width = w;
  result.scene.top = std::clamp<int64_t>(centre_row - w / 2, 0, field.num_latitudes() - w);
  result.scene.left = std::clamp<int64_t>(centre_col - w / 2, 0, field.num_longitudes() - w);
  std::set<std::pair<int64_t, int64_t>> taken;
  for (const auto& [r, c] : cells) {
    const int64_t row = r - result.scene.top, col = c - result.scene.left;
    if (row < 0 || col < 0 || row >= w || col >= w || !taken.insert({row, col}).second) {
      ++result.left_out;
      continue;
    }
    result.scene.stations.emplace_back(row, col);
  }
  return result;
}

}  // namespace npe
