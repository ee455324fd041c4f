#pragma once
// Interface of models that predict on a regular grid from a masked grid (images, gridded maps).

#include <torch/types.h>

#include "npe/ground/prediction.h"

namespace npe {

/// Implemented by on-grid models (the 2-D ConvCNP). Obtain it from a model built by the
/// registry with std::dynamic_pointer_cast<GridPredictor>.
class GridPredictor {
 public:
  virtual ~GridPredictor() = default;
  /// values [B,H,W,Dy], mask [B,H,W] (nonzero = context cell) -> mean, stddev [B,H,W,Dy].
  /// Throws InvalidInputError for wrong shapes or non-finite context values.
  virtual Prediction predict_grid(const torch::Tensor& values, const torch::Tensor& mask) = 0;
};

}  // namespace npe
