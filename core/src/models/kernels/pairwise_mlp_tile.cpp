#include "pairwise_mlp_tile.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <torch/torch.h>

#include "attention_tile_passes.h"
#include "npe/models/tile_matmul.h"
#include "vectorised.h"

namespace npe {
namespace {

// Pairs per step of the forward pass: one AVX-512 register of floats (two AVX2 ones, four SSE
// ones in the other builds of NPE_VECTORISED).
constexpr int64_t kPairsPerStep = 16;
constexpr int64_t kMaxInputs = 64, kMaxWidth = 64, kMaxOutputs = 64;

// One value per pair of a step. A GCC vector type (clang knows it too): unlike an array of 16
// floats, which the compilers keep in memory between loop iterations, it stays in a register.
using PairLanes = float __attribute__((vector_size(kPairsPerStep * sizeof(float))));
using PairMask = int32_t __attribute__((vector_size(kPairsPerStep * sizeof(int32_t))));
static_assert(sizeof(float) == sizeof(int32_t), "a mask lane per float lane");

// Units of a layer computed at once, each with its own accumulator: one accumulator would wait
// for its previous multiply-add (4 cycles) at every step; eight keep both FMA units busy.
constexpr int64_t kUnitsAtOnce = 8;

// out[u] = W[u, :] in + bias[u] for `units` units of `inputs` inputs, W row-major, then
// max(., 0) lane by lane when Relu (as bits: a comparison per lane would run lane by lane).
// Always inlined, so that it is compiled for the instruction set of its caller's clone.
template <bool Relu>
__attribute__((always_inline)) inline void dense_layer(const PairLanes* __restrict__ in,
                                                       int64_t inputs,
                                                       const float* __restrict__ weights,
                                                       const float* __restrict__ bias,
                                                       int64_t units, PairLanes* __restrict__ out) {
  int64_t u0 = 0;
  for (; u0 + kUnitsAtOnce <= units; u0 += kUnitsAtOnce) {
    PairLanes acc[kUnitsAtOnce];
    for (int64_t t = 0; t < kUnitsAtOnce; ++t) acc[t] = PairLanes{} + (bias ? bias[u0 + t] : 0.0f);
    for (int64_t i = 0; i < inputs; ++i) {
      const PairLanes x = in[i];
      for (int64_t t = 0; t < kUnitsAtOnce; ++t) acc[t] += weights[(u0 + t) * inputs + i] * x;
    }
    for (int64_t t = 0; t < kUnitsAtOnce; ++t) {
      out[u0 + t] = Relu ? (PairLanes)((PairMask)acc[t] & (acc[t] > PairLanes{})) : acc[t];
    }
  }
  for (; u0 < units; ++u0) {
    PairLanes acc = PairLanes{} + (bias ? bias[u0] : 0.0f);
    for (int64_t i = 0; i < inputs; ++i) acc += weights[u0 * inputs + i] * in[i];
    out[u0] = Relu ? (PairLanes)((PairMask)acc & (acc > PairLanes{})) : acc;
  }
}

// b3 may be null.
NPE_VECTORISED void mlp_forward_f32(const float* __restrict__ in, int64_t in_stride, int64_t inputs,
                                    int64_t pairs, const float* __restrict__ w1,
                                    const float* __restrict__ b1, const float* __restrict__ w2,
                                    const float* __restrict__ b2, const float* __restrict__ w3,
                                    const float* __restrict__ b3, int64_t width, int64_t outputs,
                                    float* __restrict__ out, int64_t out_stride) {
  PairLanes u[kMaxInputs], h1[kMaxWidth], h2[kMaxWidth], o[kMaxOutputs];
  for (int64_t p0 = 0; p0 < pairs; p0 += kPairsPerStep) {
    const int64_t n = std::min(kPairsPerStep, pairs - p0);
    // Copies of a constant size are single vector loads and stores; a ragged last step reads
    // and writes only its pairs (its other lanes are zeros, never written back).
    const bool whole = n == kPairsPerStep;
    for (int64_t i = 0; i < inputs; ++i) {
      const float* row = in + i * in_stride + p0;
      if (whole) {
        std::memcpy(&u[i], row, sizeof(PairLanes));
      } else {
        u[i] = PairLanes{};
        for (int64_t l = 0; l < n; ++l) u[i][l] = row[l];
      }
    }
    dense_layer<true>(u, inputs, w1, b1, width, h1);
    dense_layer<true>(h1, width, w2, b2, width, h2);
    dense_layer<false>(h2, width, w3, b3, outputs, o);
    for (int64_t k = 0; k < outputs; ++k) {
      float* row = out + k * out_stride + p0;
      if (whole) {
        std::memcpy(row, &o[k], sizeof(PairLanes));
      } else {
        for (int64_t l = 0; l < n; ++l) row[l] = o[k][l];
      }
    }
  }
}

void check_pairs_layout(const torch::Tensor& t, int64_t rows, int64_t pairs, const char* name) {
  TORCH_CHECK(t.dim() == 2 && t.size(0) == rows && t.size(1) == pairs &&
                  (t.stride(1) == 1 || pairs <= 1) && t.scalar_type() == torch::kFloat32 &&
                  t.device().is_cpu(),
              "pairwise_mlp_tile_forward: ", name, " must be a float32 CPU tensor [", rows, ", ",
              pairs, "] with unit stride along the pairs");
}

}  // namespace

bool pairwise_mlp_tile_forward_applies(int64_t inputs, int64_t width, int64_t outputs) {
  return inputs <= kMaxInputs && width <= kMaxWidth && outputs <= kMaxOutputs;
}

void pairwise_mlp_tile_forward(const torch::Tensor& w1, const torch::Tensor& b1,
                               const torch::Tensor& w2, const torch::Tensor& b2,
                               const torch::Tensor& w3, const torch::Tensor& b3,
                               const torch::Tensor& in_t, const torch::Tensor& out_t) {
  const int64_t width = w1.size(0), inputs = w1.size(1), outputs = w3.size(0);
  TORCH_CHECK(pairwise_mlp_tile_forward_applies(inputs, width, outputs),
              "pairwise_mlp_tile_forward: at most ", kMaxInputs, " inputs, width ", kMaxWidth,
              " and ", kMaxOutputs, " outputs");
  const int64_t pairs = in_t.size(1);
  check_pairs_layout(in_t, inputs, pairs, "in_t");
  check_pairs_layout(out_t, outputs, pairs, "out_t");
  const auto w1c = w1.contiguous(), b1c = b1.contiguous(), w2c = w2.contiguous(),
             b2c = b2.contiguous(), w3c = w3.contiguous();
  TORCH_CHECK(w2c.sizes() == torch::IntArrayRef({width, width}) && b1c.numel() == width &&
                  b2c.numel() == width && w3c.size(1) == width,
              "pairwise_mlp_tile_forward: weights of mismatched shapes");
  for (const auto* t : {&w1c, &b1c, &w2c, &b2c, &w3c}) {
    TORCH_CHECK(t->scalar_type() == torch::kFloat32, "pairwise_mlp_tile_forward: float32 only");
  }
  torch::Tensor b3c;
  if (b3.defined()) {
    b3c = b3.contiguous();
    TORCH_CHECK(b3c.numel() == outputs && b3c.scalar_type() == torch::kFloat32,
                "pairwise_mlp_tile_forward: b3 must be float32 with one value per output");
  }
  if (pairs == 0) return;
  mlp_forward_f32(in_t.data_ptr<float>(), in_t.stride(0), inputs, pairs, w1c.data_ptr<float>(),
                  b1c.data_ptr<float>(), w2c.data_ptr<float>(), b2c.data_ptr<float>(),
                  w3c.data_ptr<float>(), b3.defined() ? b3c.data_ptr<float>() : nullptr, width,
                  outputs, out_t.data_ptr<float>(), out_t.stride(0));
}

void pairwise_mlp_tile_backward(const PairwiseMlpWeights& weights, const torch::Tensor& in_t,
                                const torch::Tensor& grad_out_t, const torch::Tensor& h2,
                                const torch::Tensor& h1, const torch::Tensor& g1,
                                const torch::Tensor& g2, const PairwiseMlpGradientSums& sums,
                                const torch::Tensor& grad_in_t) {
  const TileMatmulEpilogue accumulate{nullptr, false, true};
  // The first activation, recomputed into a buffer that stays in cache: cheaper than keeping it
  // in memory and reading it back twice.
  tile_matmul(h1, in_t.t(), weights.w1t, {&weights.b1, true});
  tile_matmul(g2, grad_out_t.t(), weights.w3);
  // The pass streams the kept activation h2 in from memory; W3's gradient after it finds h2 in
  // cache (the other order ran that product at half its rate).
  relu_backward_with_bias_gradient(g2, h2, sums.b2);
  tile_matmul(sums.w3, grad_out_t, h2, accumulate);
  tile_matmul(sums.w2, g2.t(), h1, accumulate);
  tile_matmul(g1, g2, weights.w2);
  relu_backward_with_bias_gradient(g1, h1, sums.b1);
  tile_matmul(sums.w1t, in_t, g1, accumulate);
  tile_matmul(grad_in_t, weights.w1.t(), g1.t());
}

}  // namespace npe
