#include "npe/linalg.h"

#include <cmath>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

torch::Tensor jittered_cholesky(const torch::Tensor& matrix, const JitterOptions& options) {
  if (matrix.dim() < 2 || matrix.size(-1) != matrix.size(-2)) {
    throw InvalidInputError("Cholesky factorisation needs square matrices");
  }
  if (!torch::isfinite(matrix).all().item<bool>()) {
    throw InvalidInputError("covariance matrix contains NaN or infinite values");
  }
  const auto n = matrix.size(-1);
  if (n == 0) return matrix.clone();
  auto eye = torch::eye(n, matrix.options());
  auto scale = matrix.diagonal(0, -2, -1).abs().mean().item<double>();
  if (!(scale > 0.0)) scale = 1.0;
  torch::Tensor factor;
  for (int step = 0;; ++step) {
    const double jitter = options.initial * std::pow(10.0, step);
    if (jitter > options.maximum * (1 + 1e-9)) break;
    torch::Tensor info;
    std::tie(factor, info) = torch::linalg_cholesky_ex(matrix + jitter * scale * eye);
    if (info.max().item<int64_t>() == 0) return factor;
  }
  if (!options.throw_on_failure && factor.defined()) return factor;
  throw InvalidInputError("covariance matrix is not positive definite even with jitter " +
                          std::to_string(options.maximum));
}

}  // namespace npe
