#include "npe/data/image_scene.h"

#include <string>

#include <torch/torch.h>

#include "npe/data/image_tasks.h"
#include "npe/errors.h"

namespace npe {

ImageSceneTask scene_task(const ImageScene& scene) {
  const int64_t n = scene.canvas;
  if (!scene.picture.defined() || scene.picture.dim() < 2 || scene.picture.dim() > 3 ||
      scene.picture.size(0) > n || scene.picture.size(1) > n ||
      (scene.picture.dim() == 3 && scene.picture.size(2) < 1)) {
    throw DataError(
        "the picture must be a grey [H, W] or colour [H, W, C] image no larger than the " +
        std::to_string(n) + "-pixel canvas");
  }
  const int64_t channels = scene.picture.dim() == 3 ? scene.picture.size(2) : 1;
  const auto picture = scene.picture.to(torch::kFloat);
  // Row-major pixels, each its channels: value c of pixel p at p * channels + c.
  const auto base = place_on_canvas(picture, n, 0, 0).reshape({-1}).contiguous();
  const auto shown = place_on_canvas(picture, n, scene.h, scene.v).reshape({-1}).contiguous();
  const auto* base_values = base.data_ptr<float>();
  const auto* shown_values = shown.data_ptr<float>();
  std::vector<float> xc, yc;
  std::vector<uint8_t> is_context(static_cast<size_t>(n * n), 0);
  for (const int64_t index : scene.context) {
    if (index < 0 || index >= n * n) {
      throw DataError("context pixel " + std::to_string(index) + " is outside the canvas");
    }
    const int64_t r = index / n + scene.v, c = index % n + scene.h;
    xc.push_back(static_cast<float>(r - n / 2));
    xc.push_back(static_cast<float>(c - n / 2));
    for (int64_t k = 0; k < channels; ++k) yc.push_back(base_values[index * channels + k]);
    if (r >= 0 && c >= 0 && r < n && c < n) is_context[static_cast<size_t>(r * n + c)] = 1;
  }
  std::vector<int64_t> held_index;
  std::vector<float> held_y;
  for (int64_t p = 0; p < n * n; ++p) {
    if (is_context[static_cast<size_t>(p)]) continue;
    held_index.push_back(p);
    for (int64_t k = 0; k < channels; ++k) held_y.push_back(shown_values[p * channels + k]);
  }
  ImageSceneTask result;
  result.task = {torch::tensor(xc).view({1, -1, 2}),
                 torch::tensor(yc).view({1, -1, channels}),
                 canvas_coordinates(n).unsqueeze(0),
                 {}};
  result.held_out_index = torch::tensor(held_index, torch::kLong);
  result.held_out_y = torch::tensor(held_y).view({-1, channels});
  return result;
}

}  // namespace npe
