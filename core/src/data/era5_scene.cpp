#include "npe/data/era5_scene.h"

#include <cmath>
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
  for (const auto& [row, col] : scene.stations) {
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
      yc.push_back(v);
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

}  // namespace npe
