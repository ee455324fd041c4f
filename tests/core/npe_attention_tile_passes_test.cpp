// The fused TE attention kernel's elementwise passes
// (core/src/models/kernels/attention_tile_passes.h) against the libtorch operations they replace,
// on shapes that are not multiples of the vector width and on strided views as the kernel passes
// them.

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <torch/torch.h>

#include "models/kernels/attention_tile_passes.h"

namespace npe {
namespace {

double max_abs_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

// [H, rows, Nk] views of a larger buffer, as the kernel's tiles: the head stride is not
// rows * Nk, and Nk = 37 leaves a remainder after every full vector.
torch::Tensor strided_heads_rows_keys(int64_t heads, int64_t rows, int64_t keys, double scale) {
  const auto buffer = scale * torch::randn({heads, rows + 3, keys});
  return buffer.narrow(1, 1, rows);
}

TEST(AttentionTilePasses, SoftmaxOverKeysEqualsLibtorchOnAStridedTile) {
  torch::manual_seed(0);
  // Logits up to +-60: the row maximum is subtracted first, so nothing overflows.
  auto logits = strided_heads_rows_keys(8, 5, 37, 20.0);
  const auto expected = torch::softmax(logits, 2);
  softmax_over_keys_(logits);
  // Relative error of the polynomial exp (2 ulp) and a sum of 37 terms, on weights <= 1.
  EXPECT_LT(max_abs_difference(logits, expected), 1e-6);
  EXPECT_LT(max_abs_difference(logits.sum(2), torch::ones({8, 5})), 1e-6);
}

TEST(AttentionTilePasses, SoftmaxOfEqualLogitsIsUniformAndOfOneHugeLogitIsOneHot) {
  auto equal = torch::full({1, 1, 64}, 3.0f);
  softmax_over_keys_(equal);
  EXPECT_LT(max_abs_difference(equal, torch::full({1, 1, 64}, 1.0 / 64)), 1e-8);
  auto peaked = torch::zeros({1, 1, 20});
  peaked[0][0][7] = 1000.0f;
  softmax_over_keys_(peaked);
  EXPECT_FLOAT_EQ(peaked[0][0][7].item<float>(), 1.0f);
  EXPECT_LT(peaked.sum().item<double>() - 1.0, 1e-6);
}

TEST(AttentionTilePasses, SoftmaxBackwardEqualsLibtorchInFloat32AndBfloat16) {
  torch::manual_seed(1);
  const auto weights = torch::softmax(strided_heads_rows_keys(4, 6, 37, 3.0), 2);
  const auto grad = strided_heads_rows_keys(4, 6, 37, 1.0);
  const auto expected = at::_softmax_backward_data(grad, weights, 2, torch::kFloat32);
  for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    auto out = torch::empty({4, 6, 37}, torch::TensorOptions().dtype(dtype));
    auto bias_grad = torch::full({4}, 0.5f);  // accumulated into, not overwritten
    softmax_over_keys_backward(out, weights, grad, bias_grad);
    EXPECT_EQ(out.scalar_type(), dtype);
    // float32: sums of 37 products; bfloat16: the rounding of the result, 2^-9 relative.
    const double budget =
        dtype == torch::kFloat32 ? 1e-6 : 4e-3 * expected.abs().max().item<double>();
    EXPECT_LT(max_abs_difference(out, expected), budget) << dtype;
    // A per-head bias of the logits cancels in the softmax: its gradient is zero up to rounding.
    EXPECT_LT(max_abs_difference(bias_grad, torch::full({4}, 0.5f)),
              dtype == torch::kFloat32 ? 1e-5 : 0.05)
        << dtype;
    EXPECT_LT(max_abs_difference(bias_grad - 0.5, out.to(torch::kFloat32).sum({1, 2})), 1e-5);
  }
}

TEST(AttentionTilePasses, ReluBackwardMasksLikeThresholdBackwardAndSumsTheBiasGradient) {
  torch::manual_seed(2);
  for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    // Width 37: a remainder after every full vector. Activations as after a ReLU (zeros and
    // positives), one NaN, which threshold_backward passes the gradient through.
    auto activation = torch::relu(torch::randn({50, 37})).to(dtype);
    activation[3][5] = std::numeric_limits<float>::quiet_NaN();
    const auto grad_in = torch::randn({50, 37}).to(dtype);
    const auto expected = at::threshold_backward(grad_in, activation, 0);
    auto grad = grad_in.clone();
    auto bias_grad = torch::full({37}, -1.0f);
    relu_backward_with_bias_gradient(grad, activation, bias_grad);
    EXPECT_TRUE(torch::equal(grad, expected)) << dtype;
    EXPECT_EQ(grad[3][5].item<float>(), grad_in[3][5].item<float>()) << dtype;
    EXPECT_LT(max_abs_difference(bias_grad, expected.to(torch::kFloat32).sum(0) - 1.0), 1e-5)
        << dtype;
  }
}

TEST(AttentionTilePasses, WrongShapesAndTypesAreRefused) {
  auto bias = torch::zeros({4});
  EXPECT_THROW(relu_backward_with_bias_gradient(torch::zeros({3, 4}), torch::zeros({3, 5}), bias),
               c10::Error);
  EXPECT_THROW(relu_backward_with_bias_gradient(torch::zeros({3, 4}, torch::kFloat64),
                                                torch::zeros({3, 4}, torch::kFloat64), bias),
               c10::Error);
  EXPECT_THROW(relu_backward_with_bias_gradient(torch::zeros({3, 4}), torch::zeros({3, 4}),
                                                torch::zeros({3})),
               c10::Error);
  EXPECT_THROW(softmax_over_keys_(torch::zeros({2, 3, 4}).transpose(1, 2)), c10::Error);
  EXPECT_THROW(softmax_over_keys_backward(torch::zeros({2, 3, 4}), torch::zeros({2, 3, 5}),
                                          torch::zeros({2, 3, 4}), torch::zeros({2})),
               c10::Error);
}

}  // namespace
}  // namespace npe
