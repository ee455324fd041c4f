#include "npe/data/function_scene.h"

#include <cmath>
#include <memory>

#include <torch/torch.h>

#include "npe/data/gp_oracle.h"
#include "npe/errors.h"

namespace npe {
namespace {

torch::Tensor column(const std::vector<double>& values) {
  return torch::tensor(values, torch::kFloat64).view({1, static_cast<int64_t>(values.size()), 1});
}

}  // namespace

FunctionSceneTask scene_task(const FunctionScene& scene) {
  if (scene.context_x.size() != scene.context_y.size() ||
      scene.held_out_x.size() != scene.held_out_y.size()) {
    throw InvalidInputError("a scene's coordinates and values must pair up");
  }
  if (scene.num_queries < 1 || !std::isfinite(scene.query_low) ||
      !std::isfinite(scene.query_high) || scene.query_high < scene.query_low) {
    throw InvalidInputError("the query range must be finite, ordered and hold a point");
  }
  std::vector<double> xt;
  xt.reserve(static_cast<size_t>(scene.num_queries));
  const double span = scene.query_high - scene.query_low;
  for (int64_t i = 0; i < scene.num_queries; ++i) {
    xt.push_back(scene.num_queries == 1
                     ? scene.query_low
                     : scene.query_low + span * double(i) / double(scene.num_queries - 1));
  }
  FunctionSceneTask result;
  result.batch.task = {column(scene.context_x), column(scene.context_y), column(xt), {}};
  // Held-out points score the models whenever there are some (a GP sample's, or a series'
  // rows); only a GP sample has an oracle.
  if (!scene.held_out_x.empty()) {
    std::vector<double> shifted;
    for (double x : scene.held_out_x) shifted.push_back(x + scene.shift);
    result.held_out_x = column(shifted);
    result.held_out_y = column(scene.held_out_y);
  }
  if (scene.truth_kernel) {
    result.batch.oracle = std::make_shared<GpOracle>(std::vector<KernelSpec>{*scene.truth_kernel},
                                                     scene.truth_noise_std);
  }
  return result;
}

}  // namespace npe
