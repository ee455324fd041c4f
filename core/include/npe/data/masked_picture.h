#pragma once
// A picture and the mask of its known pixels as an image model's task: what `npe predict
// --image` completes. Every pixel is a target, at the image models' inputs (pixel_coordinates:
// row and column measured from the centre).

#include <torch/types.h>

#include "npe/ground/task.h"

namespace npe {

struct MaskedPicture {
  /// Context: the pixels whose mask is at least 0.5 (white, or at least half grey) with their
  /// values; targets: every pixel, row-major. A batch of one; yt undefined.
  Task task;
  /// [H * W] bool: which pixels are context.
  torch::Tensor is_context;
  /// [H * W, C]: every pixel's value, row-major.
  torch::Tensor values;
  int64_t num_context() const { return task.xc.size(1); }
};

/// picture [H, W, C] float, mask [H, W] or [H, W, 1] float. Throws InvalidInputError when their
/// sizes differ (saying both) or when no pixel is context.
MaskedPicture masked_picture_task(const torch::Tensor& picture, const torch::Tensor& mask);

}  // namespace npe
