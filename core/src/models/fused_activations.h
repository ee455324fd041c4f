#pragma once
// The elementwise steps between the matrix products of the TE attention's rho MLP, each as one
// pass over a tile that is still in cache. Done with libtorch operations they cost more than a
// third of a bf16 training step (libtorch 1.13's profiler, reference workload): addmm first
// copies the broadcast bias into its output (no vectorised path for bfloat16), relu_ is another
// pass, and threshold_backward allocates a new tensor every call.

#include <torch/types.h>

namespace npe {

/// x = max(x + bias, 0) in place, x [rows, width] contiguous float32 or bfloat16 (computed in
/// float32 and rounded to nearest even, as libtorch rounds), bias [width] float32. NaN stays
/// NaN, as in relu.
void add_bias_and_relu_(torch::Tensor& x, const torch::Tensor& bias);

/// grad = activation > 0 ? grad : 0 in place (the ReLU's backward pass given its output), both
/// [rows, width] contiguous and of one type, float32 or bfloat16. A NaN activation lets the
/// gradient through, as threshold_backward does.
void relu_backward_(torch::Tensor& grad, const torch::Tensor& activation);

}  // namespace npe
