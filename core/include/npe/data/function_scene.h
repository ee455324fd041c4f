#pragma once
// The model's task for what the 1-D tab shows: the context points as drawn (already shifted by
// Δ), the visible x range where the curves are drawn, and the ground truth's held-out
// observations and kernel when there is one. Built here, in core, so the tab only describes its
// scene and the rules (float64 inputs, the query grid, held-out points moving with Δ, the GP
// oracle of the truth) are tested without Qt.

#include <cstdint>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "npe/data/task_source.h"
#include "npe/ground/kernels.h"

namespace npe {

struct FunctionScene {
  /// Context points as shown, Δ included.
  std::vector<double> context_x, context_y;
  /// The query grid: num_queries evenly spaced points from query_low to query_high (one query:
  /// query_low alone, as for the attention at the hovered x).
  double query_low = -1.0, query_high = 1.0;
  int64_t num_queries = 256;
  /// Δ: moves the held-out observations (given at Δ = 0) like the context.
  double shift = 0.0;
  /// The ground truth: held-out observations at Δ = 0 (a GP sample's, or the rows of a series
  /// that are not context) and, for a GP sample, its kernel and noise (the oracle of this data).
  std::vector<double> held_out_x, held_out_y;
  std::optional<KernelSpec> truth_kernel;
  double truth_noise_std = 0.0;
};

struct FunctionSceneTask {
  /// One task (float64 inputs: points shifted by up to 1e6 keep their digits until a model sees
  /// them), with the truth's GP oracle when there is one.
  TaskBatch batch;
  /// Held-out points [1, N, 1] (Δ included) and their values; undefined without any.
  torch::Tensor held_out_x, held_out_y;
};

/// Throws InvalidInputError for coordinates and values of different lengths, no query point, or
/// a range that is not finite or runs backwards.
FunctionSceneTask scene_task(const FunctionScene& scene);

}  // namespace npe
