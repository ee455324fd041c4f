#pragma once
// The elementwise passes over one tile of the fused TE attention kernel
// (pairwise_kernel_attention.cpp): the softmax over the keys and its backward pass, and the
// backward pass of rho's ReLUs. Each is one loop over the tile that vectorises, where the
// libtorch composition took two or three passes (and bfloat16 ones convert element by element)
// plus a product with a row of ones for a bias gradient; at 240 tiles per training step of the
// reference workload these passes were about a tenth of the step.
//
// Attention weights are laid out heads first, [H, rows, Nk] per tile, the layout of the per-head
// products that consume them, so that no pass transposes them.

#include <torch/types.h>

namespace npe {

/// In place: each row of logits [H, rows, Nk] (float32, unit stride along Nk) becomes its
/// softmax over the keys.
void softmax_over_keys_(const torch::Tensor& logits);

/// The softmax's backward pass: out [H, rows, Nk] = weights * (grad - sum_keys weights * grad),
/// the gradient of the logits, written in out's dtype (float32 or bfloat16); logit_bias_grad [H]
/// (float32) += out summed over rows and keys (the gradient of a per-head bias of the logits:
/// zero up to rounding, as such a bias cancels in the softmax). weights and grad float32, all
/// three [H, rows, Nk] with unit stride along Nk.
void softmax_over_keys_backward(const torch::Tensor& out, const torch::Tensor& weights,
                                const torch::Tensor& grad, const torch::Tensor& logit_bias_grad);

/// ReLU's backward pass fused with the bias gradient of the layer before it: grad [rows, width]
/// (in place) = 0 where activation <= 0, as at::threshold_backward(grad, activation, 0); then
/// bias_grad [width] (float32) += the masked grad's column sums, accumulated in float32. grad
/// and activation contiguous, float32 or bfloat16, of one dtype.
void relu_backward_with_bias_gradient(const torch::Tensor& grad, const torch::Tensor& activation,
                                      const torch::Tensor& bias_grad);

}  // namespace npe
