#include "fused_activations.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "vectorised.h"

namespace npe {
namespace {

inline float bfloat16_to_float(uint16_t bits) {
  const uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// Round to nearest even, NaN to the canonical quiet NaN: the rounding libtorch's BFloat16 uses.
inline uint16_t float_to_bfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  return value != value ? uint16_t(0x7FC0) : uint16_t(rounded);
}

NPE_VECTORISED void add_bias_and_relu_rows(float* x, const float* bias, int64_t rows,
                                           int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * width;
    for (int64_t j = 0; j < width; ++j) {
      const float v = row[j] + bias[j];
      row[j] = v < 0.0f ? 0.0f : v;
    }
  }
}

NPE_VECTORISED void add_bias_and_relu_rows(uint16_t* x, const float* bias, int64_t rows,
                                           int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    uint16_t* row = x + r * width;
    for (int64_t j = 0; j < width; ++j) {
      const float v = bfloat16_to_float(row[j]) + bias[j];
      row[j] = float_to_bfloat16(v < 0.0f ? 0.0f : v);
    }
  }
}

NPE_VECTORISED void relu_backward_elements(float* grad, const float* activation, int64_t n) {
  for (int64_t i = 0; i < n; ++i) grad[i] = activation[i] <= 0.0f ? 0.0f : grad[i];
}

NPE_VECTORISED void relu_backward_elements(uint16_t* grad, const uint16_t* activation, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    grad[i] = bfloat16_to_float(activation[i]) <= 0.0f ? uint16_t(0) : grad[i];
}

// Inside the attention's parallel tiles these run on the calling thread (a nested parallel_for
// does); called on a whole tensor they use libtorch's threads.
constexpr int64_t kGrain = int64_t{1} << 16;

}  // namespace

void add_bias_and_relu_(torch::Tensor& x, const torch::Tensor& bias) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.device().is_cpu(),
              "add_bias_and_relu_: x must be a contiguous CPU matrix");
  TORCH_CHECK(bias.scalar_type() == at::kFloat && bias.numel() == x.size(1),
              "add_bias_and_relu_: bias must be float32 with one value per column");
  const auto b = bias.contiguous();
  const float* bias_data = b.data_ptr<float>();
  const int64_t width = x.size(1);
  const bool bf16 = x.scalar_type() == at::kBFloat16;
  TORCH_CHECK(bf16 || x.scalar_type() == at::kFloat, "add_bias_and_relu_: float32 or bfloat16");
  void* data = x.data_ptr();
  at::parallel_for(0, x.size(0), std::max<int64_t>(1, kGrain / width), [&](int64_t r0, int64_t r1) {
    if (bf16) {
      add_bias_and_relu_rows(static_cast<uint16_t*>(data) + r0 * width, bias_data, r1 - r0, width);
    } else {
      add_bias_and_relu_rows(static_cast<float*>(data) + r0 * width, bias_data, r1 - r0, width);
    }
  });
}

void relu_backward_(torch::Tensor& grad, const torch::Tensor& activation) {
  TORCH_CHECK(grad.is_contiguous() && activation.is_contiguous() &&
                  grad.sizes() == activation.sizes() &&
                  grad.scalar_type() == activation.scalar_type() && grad.device().is_cpu(),
              "relu_backward_: grad and activation must be contiguous CPU tensors of one shape "
              "and type");
  const bool bf16 = grad.scalar_type() == at::kBFloat16;
  TORCH_CHECK(bf16 || grad.scalar_type() == at::kFloat, "relu_backward_: float32 or bfloat16");
  void* g = grad.data_ptr();
  const void* a = activation.data_ptr();
  at::parallel_for(0, grad.numel(), kGrain, [&](int64_t i0, int64_t i1) {
    if (bf16) {
      relu_backward_elements(static_cast<uint16_t*>(g) + i0, static_cast<const uint16_t*>(a) + i0,
                             i1 - i0);
    } else {
      relu_backward_elements(static_cast<float*>(g) + i0, static_cast<const float*>(a) + i0,
                             i1 - i0);
    }
  });
}

}  // namespace npe
