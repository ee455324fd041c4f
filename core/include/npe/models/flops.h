#pragma once
// Analytic floating-point operation counts of the models (multiply-add = 2 FLOPs), used by
// `npe bench train` to relate measured speed to the hardware's limit.

#include <cstdint>

#include "npe/models/model_config.h"

namespace npe {

/// Sizes of one batch of tasks.
struct BatchShape {
  int64_t batch = 16;
  int64_t num_context = 64;
  int64_t num_targets = 128;
  /// Extent of all inputs (max - min), for the grid-based ConvCNP.
  double input_span = 6.0;
};

/// Forward-pass FLOPs of the model's matrix products, convolutions and pairwise MLPs (the
/// terms that dominate; element-wise operations and normalisations are not counted).
/// Throws ConfigError for an unknown kind.
double forward_flops(const ModelConfig& config, const BatchShape& shape);

/// FLOPs of one training step: forward plus backward, counted as 3x the forward pass (the
/// backward pass computes two products per forward product).
inline double training_step_flops(const ModelConfig& config, const BatchShape& shape) {
  return 3.0 * forward_flops(config, shape);
}

}  // namespace npe
