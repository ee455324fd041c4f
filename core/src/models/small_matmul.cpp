#include "small_matmul.h"

#include <algorithm>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "vectorised.h"

namespace npe {
namespace {

// Products up to this inner or output width are "small": libtorch's per-matrix overhead
// dominates them, and their output rows fit in a few vector registers.
constexpr int64_t kSmallWidth = 64;

// C [M,P] (contiguous) = A [M,K] (row stride ra, column stride ca) @ B [K,P] (row stride ldb,
// contiguous rows). Four rows of C at a time share each loaded row of B.
NPE_VECTORISED void small_matmul(const float* a, int64_t ra, int64_t ca, const float* b,
                                 int64_t ldb, float* c, int64_t m, int64_t k, int64_t p) {
  std::fill(c, c + m * p, 0.0f);
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    float *c0 = c + i * p, *c1 = c0 + p, *c2 = c1 + p, *c3 = c2 + p;
    const float* a0 = a + i * ra;
    for (int64_t l = 0; l < k; ++l) {
      const float x0 = a0[l * ca], x1 = a0[ra + l * ca], x2 = a0[2 * ra + l * ca],
                  x3 = a0[3 * ra + l * ca];
      const float* row = b + l * ldb;
      for (int64_t j = 0; j < p; ++j) {
        c0[j] += x0 * row[j];
        c1[j] += x1 * row[j];
        c2[j] += x2 * row[j];
        c3[j] += x3 * row[j];
      }
    }
  }
  for (; i < m; ++i) {
    float* ci = c + i * p;
    for (int64_t l = 0; l < k; ++l) {
      const float x = a[i * ra + l * ca];
      const float* row = b + l * ldb;
      for (int64_t j = 0; j < p; ++j) ci[j] += x * row[j];
    }
  }
}

bool loop_kernel_applies(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.dim() < 2 || a.dim() != b.dim()) return false;
  for (const auto* t : {&a, &b}) {
    if (!t->device().is_cpu() || t->scalar_type() != at::kFloat) return false;
  }
  for (int64_t d = 0; d + 2 < a.dim(); ++d) {
    if (a.size(d) != b.size(d)) return false;
  }
  return a.size(-1) == b.size(-2) && (a.size(-1) <= kSmallWidth || b.size(-1) <= kSmallWidth);
}

}  // namespace

torch::Tensor small_batched_matmul(const torch::Tensor& a, const torch::Tensor& b) {
  if (!loop_kernel_applies(a, b)) return torch::matmul(a, b);
  const int64_t m = a.size(-2), k = a.size(-1), p = b.size(-1);
  auto out_shape = a.sizes().vec();
  out_shape.back() = p;
  auto out = torch::empty(out_shape, a.options());
  if (out.numel() == 0) return out;
  if (k == 0) return out.zero_();
  // Batch dimensions flattened: a view for the usual layouts, a copy otherwise.
  const auto a3 = a.reshape({-1, m, k}), b3 = b.reshape({-1, k, p});
  const int64_t batch = a3.size(0);
  const float *a_data = a3.data_ptr<float>(), *b_data = b3.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  const int64_t sa0 = a3.stride(0), sa1 = a3.stride(1), sa2 = a3.stride(2);
  const int64_t sb0 = b3.stride(0), sb1 = b3.stride(1), sb2 = b3.stride(2);
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, m * k * p));
  at::parallel_for(0, batch, grain, [&](int64_t begin, int64_t end) {
    // B with contiguous rows: transposed operands are packed once per matrix.
    std::vector<float> packed(sb2 == 1 ? 0 : static_cast<size_t>(k * p));
    for (int64_t n = begin; n < end; ++n) {
      const float* bn = b_data + n * sb0;
      int64_t ldb = sb1;
      if (sb2 != 1) {
        for (int64_t l = 0; l < k; ++l) {
          for (int64_t j = 0; j < p; ++j) packed[size_t(l * p + j)] = bn[l * sb1 + j * sb2];
        }
        bn = packed.data();
        ldb = p;
      }
      small_matmul(a_data + n * sa0, sa1, sa2, bn, ldb, out_data + n * m * p, m, k, p);
    }
  });
  return out;
}

}  // namespace npe
