#include "attention_tile_passes.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include <c10/util/BFloat16.h>
#include <torch/torch.h>

#include "polynomial_exp.h"
#include "vectorised.h"

namespace npe {
namespace {

static_assert(sizeof(c10::BFloat16) == sizeof(uint16_t), "bfloat16 is 16 bits");

float tile_bf16_to_float(uint16_t bits) {
  const uint32_t widened = uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &widened, sizeof value);
  return value;
}

// Round to nearest even, NaN kept a (quiet) NaN, as c10::BFloat16's constructor.
uint16_t tile_float_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  return value != value ? uint16_t{0x7FC0} : static_cast<uint16_t>(rounded);
}

// Reductions over a row in kReductionLanes independent partial results: one float accumulator would
// not vectorise without reassociation.
constexpr int64_t kReductionLanes = 16;

// The lanes folded in halves into lanes[0]: four steps that vectorise, where a loop over the
// lanes into one float is a chain of 15 dependent operations (a third of the softmax of a
// 32-key row, the rows of the images tab's TE-PT-TNP).
template <class Combine>
inline float fold_lanes(float* lanes, Combine combine) {
  for (int64_t half = kReductionLanes / 2; half > 0; half /= 2) {
    for (int64_t l = 0; l < half; ++l) lanes[l] = combine(lanes[l], lanes[l + half]);
  }
  return lanes[0];
}

inline float larger(float a, float b) {
  return b > a ? b : a;
}
inline float plus(float a, float b) {
  return a + b;
}

// The softmax of `rows` rows of n values, `stride` apart, in place.
NPE_VECTORISED void softmax_rows(float* __restrict__ base, int64_t rows, int64_t stride,
                                 int64_t n) {
  const int64_t whole = n / kReductionLanes * kReductionLanes;
  for (int64_t r = 0; r < rows; ++r) {
    float* __restrict__ x = base + r * stride;
    float lanes[kReductionLanes];
    for (float& lane : lanes) lane = -std::numeric_limits<float>::infinity();
    for (int64_t i0 = 0; i0 < whole; i0 += kReductionLanes) {
      for (int64_t l = 0; l < kReductionLanes; ++l) lanes[l] = larger(lanes[l], x[i0 + l]);
    }
    float max = fold_lanes(lanes, larger);
    for (int64_t i = whole; i < n; ++i) max = larger(max, x[i]);
    for (float& lane : lanes) lane = 0.0f;
    for (int64_t i0 = 0; i0 < whole; i0 += kReductionLanes) {
      for (int64_t l = 0; l < kReductionLanes; ++l) {
        x[i0 + l] = polynomial_exp(x[i0 + l] - max);
        lanes[l] += x[i0 + l];
      }
    }
    float total = fold_lanes(lanes, plus);
    for (int64_t i = whole; i < n; ++i) {
      x[i] = polynomial_exp(x[i] - max);
      total += x[i];
    }
    const float inverse = 1.0f / total;
    for (int64_t i = 0; i < n; ++i) x[i] *= inverse;
  }
}

// Returns sum_i a_i g_i.
NPE_VECTORISED float dot_row(const float* __restrict__ a, const float* __restrict__ g, int64_t n) {
  float lanes[kReductionLanes] = {};
  const int64_t whole = n / kReductionLanes * kReductionLanes;
  for (int64_t i0 = 0; i0 < whole; i0 += kReductionLanes) {
    for (int64_t l = 0; l < kReductionLanes; ++l) lanes[l] += a[i0 + l] * g[i0 + l];
  }
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  for (int64_t i = whole; i < n; ++i) sum += a[i] * g[i];
  return sum;
}

// out_i = a_i (g_i - dot); returns sum_i out_i as computed.
NPE_VECTORISED float softmax_backward_row_f32(float* __restrict__ out, const float* __restrict__ a,
                                              const float* __restrict__ g, float dot, int64_t n) {
  float lanes[kReductionLanes] = {};
  const int64_t whole = n / kReductionLanes * kReductionLanes;
  for (int64_t i0 = 0; i0 < whole; i0 += kReductionLanes) {
    for (int64_t l = 0; l < kReductionLanes; ++l) {
      out[i0 + l] = a[i0 + l] * (g[i0 + l] - dot);
      lanes[l] += out[i0 + l];
    }
  }
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  for (int64_t i = whole; i < n; ++i) {
    out[i] = a[i] * (g[i] - dot);
    sum += out[i];
  }
  return sum;
}

// As above, rounded to bfloat16; the sum is of the rounded values (what the products see).
NPE_VECTORISED float softmax_backward_row_bf16(uint16_t* __restrict__ out,
                                               const float* __restrict__ a,
                                               const float* __restrict__ g, float dot, int64_t n) {
  float lanes[kReductionLanes] = {};
  const int64_t whole = n / kReductionLanes * kReductionLanes;
  for (int64_t i0 = 0; i0 < whole; i0 += kReductionLanes) {
    for (int64_t l = 0; l < kReductionLanes; ++l) {
      const uint16_t rounded = tile_float_to_bf16(a[i0 + l] * (g[i0 + l] - dot));
      out[i0 + l] = rounded;
      lanes[l] += tile_bf16_to_float(rounded);
    }
  }
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  for (int64_t i = whole; i < n; ++i) {
    out[i] = tile_float_to_bf16(a[i] * (g[i] - dot));
    sum += tile_bf16_to_float(out[i]);
  }
  return sum;
}

// Row by row, so that the column sums stay in L1 and each row's loop vectorises over columns.
NPE_VECTORISED void relu_backward_rows_f32(float* __restrict__ grad,
                                           const float* __restrict__ activation,
                                           float* __restrict__ sums, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    float* g = grad + r * width;
    const float* a = activation + r * width;
    for (int64_t c = 0; c < width; ++c) {
      const float kept = a[c] <= 0.0f ? 0.0f : g[c];
      g[c] = kept;
      sums[c] += kept;
    }
  }
}

NPE_VECTORISED void relu_backward_rows_bf16(uint16_t* __restrict__ grad,
                                            const uint16_t* __restrict__ activation,
                                            float* __restrict__ sums, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    uint16_t* g = grad + r * width;
    const uint16_t* a = activation + r * width;
    for (int64_t c = 0; c < width; ++c) {
      const uint16_t kept = tile_bf16_to_float(a[c]) <= 0.0f ? uint16_t{0} : g[c];
      g[c] = kept;
      sums[c] += tile_bf16_to_float(kept);
    }
  }
}

void check_heads_rows_keys(const torch::Tensor& t, const char* name) {
  TORCH_CHECK(t.dim() == 3 && t.device().is_cpu() && (t.stride(2) == 1 || t.size(2) <= 1),
              "attention tile pass: ", name,
              " must be a [H, rows, Nk] CPU tensor with unit "
              "stride along Nk");
}

}  // namespace

void softmax_over_keys_(const torch::Tensor& logits) {
  check_heads_rows_keys(logits, "logits");
  TORCH_CHECK(logits.scalar_type() == torch::kFloat32, "softmax_over_keys_: float32 only");
  auto* base = logits.data_ptr<float>();
  for (int64_t h = 0; h < logits.size(0); ++h) {
    softmax_rows(base + h * logits.stride(0), logits.size(1), logits.stride(1), logits.size(2));
  }
}

void softmax_over_keys_backward(const torch::Tensor& out, const torch::Tensor& weights,
                                const torch::Tensor& grad, const torch::Tensor& logit_bias_grad) {
  check_heads_rows_keys(out, "out");
  check_heads_rows_keys(weights, "weights");
  check_heads_rows_keys(grad, "grad");
  TORCH_CHECK(weights.sizes() == out.sizes() && grad.sizes() == out.sizes(),
              "softmax_over_keys_backward: out, weights and grad differ in shape");
  TORCH_CHECK(weights.scalar_type() == torch::kFloat32 && grad.scalar_type() == torch::kFloat32 &&
                  (out.scalar_type() == torch::kFloat32 || out.scalar_type() == torch::kBFloat16),
              "softmax_over_keys_backward: float32 weights and grad, float32 or bfloat16 out");
  TORCH_CHECK(
      logit_bias_grad.scalar_type() == torch::kFloat32 && logit_bias_grad.is_contiguous() &&
          logit_bias_grad.numel() == out.size(0),
      "softmax_over_keys_backward: logit_bias_grad must be float32 with one value per head");
  const int64_t keys = out.size(2);
  const auto* a = weights.data_ptr<float>();
  const auto* g = grad.data_ptr<float>();
  auto* sums = logit_bias_grad.data_ptr<float>();
  const bool bf16 = out.scalar_type() == torch::kBFloat16;
  for (int64_t h = 0; h < out.size(0); ++h) {
    float head_sum = 0.0f;
    for (int64_t r = 0; r < out.size(1); ++r) {
      const float* a_row = a + h * weights.stride(0) + r * weights.stride(1);
      const float* g_row = g + h * grad.stride(0) + r * grad.stride(1);
      const float dot = dot_row(a_row, g_row, keys);
      const int64_t offset = h * out.stride(0) + r * out.stride(1);
      head_sum +=
          bf16 ? softmax_backward_row_bf16(
                     reinterpret_cast<uint16_t*>(out.data_ptr<c10::BFloat16>()) + offset, a_row,
                     g_row, dot, keys)
               : softmax_backward_row_f32(out.data_ptr<float>() + offset, a_row, g_row, dot, keys);
    }
    sums[h] += head_sum;
  }
}

void relu_backward_with_bias_gradient(const torch::Tensor& grad, const torch::Tensor& activation,
                                      const torch::Tensor& bias_grad) {
  TORCH_CHECK(grad.dim() == 2 && activation.sizes() == grad.sizes(),
              "relu_backward_with_bias_gradient: grad and activation must be [rows, width] alike");
  TORCH_CHECK(grad.is_contiguous() && activation.is_contiguous() && bias_grad.is_contiguous(),
              "relu_backward_with_bias_gradient: contiguous tensors only");
  TORCH_CHECK(grad.scalar_type() == activation.scalar_type() &&
                  (grad.scalar_type() == torch::kFloat32 || grad.scalar_type() == torch::kBFloat16),
              "relu_backward_with_bias_gradient: float32 or bfloat16, one dtype");
  TORCH_CHECK(bias_grad.scalar_type() == torch::kFloat32 && bias_grad.numel() == grad.size(1),
              "relu_backward_with_bias_gradient: bias_grad must be float32 with one value per "
              "column");
  TORCH_CHECK(grad.device().is_cpu() && activation.device().is_cpu() && bias_grad.device().is_cpu(),
              "relu_backward_with_bias_gradient: CPU tensors only");
  const int64_t rows = grad.size(0), width = grad.size(1);
  auto* sums = bias_grad.data_ptr<float>();
  if (grad.scalar_type() == torch::kFloat32) {
    relu_backward_rows_f32(grad.data_ptr<float>(), activation.data_ptr<float>(), sums, rows, width);
  } else {
    relu_backward_rows_bf16(reinterpret_cast<uint16_t*>(grad.data_ptr<c10::BFloat16>()),
                            reinterpret_cast<const uint16_t*>(activation.data_ptr<c10::BFloat16>()),
                            sums, rows, width);
  }
}

}  // namespace npe
