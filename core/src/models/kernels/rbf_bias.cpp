#include "rbf_bias.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "polynomial_exp.h"
#include "vectorised.h"

namespace npe {
namespace {

using torch::Tensor;

// d2[m] = ||x - xk_m||^2 for one query location x [dx] and keys xk [tk, dx], from differences
// (norms would cancel far from the origin and break translation equivariance).
void squared_distance_row(const float* x, const float* xk, int64_t tk, int64_t dx, float* d2) {
  std::fill(d2, d2 + tk, 0.0f);
  for (int64_t d = 0; d < dx; ++d) {
    for (int64_t m = 0; m < tk; ++m) {
      const float diff = x[d] - xk[m * dx + d];
      d2[m] += diff * diff;
    }
  }
}

// row[m] += sum_f a_f exp(-b_f d2[m]) for one head.
NPE_VECTORISED void add_bias_row(float* row, const float* d2, int64_t tk, const float* amplitudes,
                                 const float* rates, int64_t features) {
  for (int64_t f = 0; f < features; ++f) {
    const float a = amplitudes[f], minus_b = -rates[f];
    for (int64_t m = 0; m < tk; ++m) row[m] += a * polynomial_exp(minus_b * d2[m]);
  }
}

// For one head: g_m e_fm and g_m e_fm d2_m, e_fm = exp(-b_f d2_m), summed into kLanes
// independent lanes per feature, lanes [features][2][kLanes] (a sum in one float would not
// vectorise without reassociation). The caller folds the lanes into double every few rows: one
// row of 64 keys is only four vectors, and reducing lanes per row cost more than the row.
constexpr int64_t kLanes = 16;
NPE_VECTORISED void bias_gradient_row(const float* grad, const float* d2, int64_t tk,
                                      const float* rates, int64_t features, float* lanes) {
  const int64_t whole = tk / kLanes * kLanes;
  for (int64_t f = 0; f < features; ++f) {
    const float minus_b = -rates[f];
    // Local copies, so that the compiler keeps them in registers (lanes might alias grad).
    float lanes_a[kLanes], lanes_b[kLanes];
    std::copy(lanes + f * 2 * kLanes, lanes + f * 2 * kLanes + kLanes, lanes_a);
    std::copy(lanes + f * 2 * kLanes + kLanes, lanes + (f + 1) * 2 * kLanes, lanes_b);
    for (int64_t m0 = 0; m0 < whole; m0 += kLanes) {
      for (int64_t l = 0; l < kLanes; ++l) {
        const float weighted = grad[m0 + l] * polynomial_exp(minus_b * d2[m0 + l]);
        lanes_a[l] += weighted;
        lanes_b[l] += weighted * d2[m0 + l];
      }
    }
    for (int64_t m = whole; m < tk; ++m) {
      const float weighted = grad[m] * polynomial_exp(minus_b * d2[m]);
      lanes_a[m - whole] += weighted;
      lanes_b[m - whole] += weighted * d2[m];
    }
    std::copy(lanes_a, lanes_a + kLanes, lanes + f * 2 * kLanes);
    std::copy(lanes_b, lanes_b + kLanes, lanes + f * 2 * kLanes + kLanes);
  }
}

// Rows between two folds of the float lanes into double: keeps each float sum short.
constexpr int64_t kRowsPerFold = 16;

bool is_cpu_float(const Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == at::kFloat;
}

bool fused_applies(std::initializer_list<const Tensor*> tensors) {
  return std::all_of(tensors.begin(), tensors.end(),
                     [](const Tensor* t) { return is_cpu_float(*t); });
}

// The same quantities from libtorch operations, for other devices and types: F temporaries
// [B,H,Tq,Tk].
Tensor squared_distances(const Tensor& xq, const Tensor& xk) {
  return (xq.unsqueeze(2) - xk.unsqueeze(1)).pow(2).sum(-1).unsqueeze(1);  // [B,1,Tq,Tk]
}
Tensor rbf_term(const Tensor& d2, const Tensor& rates, int64_t f) {
  return (d2 * -rates.select(1, f).view({1, -1, 1, 1})).exp_();
}

}  // namespace

void add_rbf_bias_(Tensor& logits, const Tensor& xq, const Tensor& xk, const Tensor& amplitudes,
                   const Tensor& rates) {
  const int64_t batch = logits.size(0), heads = logits.size(1), tq = logits.size(2),
                tk = logits.size(3), dx = xq.size(2), features = amplitudes.size(1);
  if (batch * heads * tq * tk == 0) return;
  if (!fused_applies({&logits, &xq, &xk, &amplitudes, &rates}) || !logits.is_contiguous()) {
    const auto d2 = squared_distances(xq, xk);
    for (int64_t f = 0; f < features; ++f)
      logits.add_(rbf_term(d2, rates, f) * amplitudes.select(1, f).view({1, heads, 1, 1}));
    return;
  }
  const auto xq_c = xq.contiguous(), xk_c = xk.contiguous();
  const auto a_c = amplitudes.contiguous(), b_c = rates.contiguous();
  const float *xq_data = xq_c.data_ptr<float>(), *xk_data = xk_c.data_ptr<float>(),
              *a = a_c.data_ptr<float>(), *b = b_c.data_ptr<float>();
  float* out = logits.data_ptr<float>();
  const int64_t grain = std::max<int64_t>(1, 16384 / (heads * tk));
  at::parallel_for(0, batch * tq, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> d2(static_cast<size_t>(tk));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row / tq, n = row % tq;
      squared_distance_row(xq_data + row * dx, xk_data + i * tk * dx, tk, dx, d2.data());
      for (int64_t h = 0; h < heads; ++h) {
        add_bias_row(out + ((i * heads + h) * tq + n) * tk, d2.data(), tk, a + h * features,
                     b + h * features, features);
      }
    }
  });
}

void accumulate_rbf_bias_gradients(const Tensor& grad_logits, const Tensor& xq, const Tensor& xk,
                                   const Tensor& amplitudes, const Tensor& rates,
                                   Tensor& grad_amplitudes, Tensor& grad_rates) {
  const int64_t batch = grad_logits.size(0), heads = grad_logits.size(1), tq = grad_logits.size(2),
                tk = grad_logits.size(3), dx = xq.size(2), features = amplitudes.size(1);
  if (batch * heads * tq * tk == 0) return;
  // d bias / d a_f = e_f, d bias / d b_f = -a_f d2 e_f.
  if (!fused_applies(
          {&grad_logits, &xq, &xk, &amplitudes, &rates, &grad_amplitudes, &grad_rates})) {
    const auto d2 = squared_distances(xq, xk);
    for (int64_t f = 0; f < features; ++f) {
      const auto weighted = grad_logits * rbf_term(d2, rates, f);
      grad_amplitudes.select(1, f).add_(weighted.sum({0, 2, 3}));
      grad_rates.select(1, f).add_(-(weighted * d2).sum({0, 2, 3}) * amplitudes.select(1, f));
    }
    return;
  }
  const auto g_c = grad_logits.contiguous(), xq_c = xq.contiguous(), xk_c = xk.contiguous(),
             b_c = rates.contiguous();
  const float *g = g_c.data_ptr<float>(), *xq_data = xq_c.data_ptr<float>(),
              *xk_data = xk_c.data_ptr<float>(), *b = b_c.data_ptr<float>();
  // A fixed number of blocks of rows, each summing into its own slot: the result does not
  // depend on the number of threads.
  const int64_t rows = batch * tq, blocks = std::min<int64_t>(rows, 64);
  const int64_t per_block = heads * features;
  std::vector<double> by_amplitude(static_cast<size_t>(blocks * per_block), 0.0),
      by_rate(by_amplitude.size(), 0.0);
  at::parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> d2(static_cast<size_t>(tk));
    std::vector<float> lanes(static_cast<size_t>(per_block * 2 * kLanes), 0.0f);
    for (int64_t block = begin; block < end; ++block) {
      double* slot_a = by_amplitude.data() + block * per_block;
      double* slot_b = by_rate.data() + block * per_block;
      auto fold = [&] {
        for (int64_t hf = 0; hf < per_block; ++hf) {
          float* lane = lanes.data() + hf * 2 * kLanes;
          for (int64_t l = 0; l < kLanes; ++l) {
            slot_a[hf] += lane[l];
            slot_b[hf] += lane[kLanes + l];
          }
          std::fill(lane, lane + 2 * kLanes, 0.0f);
        }
      };
      const int64_t first = block * rows / blocks, last = (block + 1) * rows / blocks;
      for (int64_t row = first; row < last; ++row) {
        const int64_t i = row / tq, n = row % tq;
        squared_distance_row(xq_data + row * dx, xk_data + i * tk * dx, tk, dx, d2.data());
        for (int64_t h = 0; h < heads; ++h) {
          bias_gradient_row(g + ((i * heads + h) * tq + n) * tk, d2.data(), tk, b + h * features,
                            features, lanes.data() + h * features * 2 * kLanes);
        }
        if ((row - first + 1) % kRowsPerFold == 0 || row + 1 == last) fold();
      }
    }
  });
  auto ga = grad_amplitudes.accessor<float, 2>();
  auto gb = grad_rates.accessor<float, 2>();
  const auto a = amplitudes.accessor<float, 2>();
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t f = 0; f < features; ++f) {
      double sum_a = 0, sum_b = 0;
      for (int64_t block = 0; block < blocks; ++block) {
        sum_a += by_amplitude[size_t(block * per_block + h * features + f)];
        sum_b += by_rate[size_t(block * per_block + h * features + f)];
      }
      ga[h][f] += float(sum_a);
      gb[h][f] -= float(double(a[h][f]) * sum_b);
    }
  }
}

}  // namespace npe
