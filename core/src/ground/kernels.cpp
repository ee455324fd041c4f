#include "npe/ground/kernels.h"

#include <cmath>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

std::string kernel_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::SquaredExponential:
      return "se";
    case KernelKind::Periodic:
      return "periodic";
    case KernelKind::Matern52:
      return "matern52";
  }
  return "unknown";
}

KernelKind kernel_kind_from_name(const std::string& name) {
  for (auto kind : all_kernel_kinds()) {
    if (kernel_name(kind) == name) return kind;
  }
  throw ConfigError("unknown kernel '" + name + "' (known: se, periodic, matern52)");
}

std::vector<KernelKind> all_kernel_kinds() {
  return {KernelKind::SquaredExponential, KernelKind::Periodic, KernelKind::Matern52};
}

KernelSpec paper_kernel(KernelKind kind, double ell, double variance) {
  KernelSpec spec;
  spec.kind = kind;
  spec.variance = variance;
  if (kind == KernelKind::Periodic) {
    spec.period = ell;
    spec.lengthscale = 1.0;
  } else {
    spec.lengthscale = ell;
  }
  return spec;
}

torch::Tensor kernel_matrix(KernelKind kind, const torch::Tensor& x1, const torch::Tensor& x2,
                            const torch::Tensor& lengthscale, const torch::Tensor& variance,
                            const torch::Tensor& period) {
  // diff: [..., N, M, Dx]
  auto diff = x1.unsqueeze(-2) - x2.unsqueeze(-3);
  switch (kind) {
    case KernelKind::SquaredExponential: {
      auto sq = diff.square().sum(-1) / lengthscale.square();
      return variance * torch::exp(-0.5 * sq);
    }
    case KernelKind::Periodic: {
      auto s = torch::sin(M_PI * diff.abs() / period.unsqueeze(-1)).square().sum(-1);
      return variance * torch::exp(-2.0 * s / lengthscale.square());
    }
    case KernelKind::Matern52: {
      // sqrt of a clamped square keeps the gradient finite at distance 0.
      auto r = torch::sqrt(diff.square().sum(-1).clamp_min(1e-30)) / lengthscale;
      auto s5r = std::sqrt(5.0) * r;
      return variance * (1.0 + s5r + 5.0 / 3.0 * r.square()) * torch::exp(-s5r);
    }
  }
  throw ConfigError("unknown kernel kind");
}

torch::Tensor kernel_matrix(const KernelSpec& spec, const torch::Tensor& x1,
                            const torch::Tensor& x2) {
  auto opts = x1.options();
  if (!spec.ard_lengthscales.empty()) {
    if (spec.kind != KernelKind::SquaredExponential) {
      throw ConfigError("ARD lengthscales are only supported for the squared-exponential kernel");
    }
    if (static_cast<int64_t>(spec.ard_lengthscales.size()) != x1.size(-1)) {
      throw InvalidInputError(
          "kernel has " + std::to_string(spec.ard_lengthscales.size()) +
          " ARD lengthscales but the inputs have D_x = " + std::to_string(x1.size(-1)));
    }
    // Scaling each input dimension by its lengthscale turns ARD into a unit-lengthscale SE.
    auto inverse = 1.0 / torch::tensor(spec.ard_lengthscales, opts);
    return kernel_matrix(spec.kind, x1 * inverse, x2 * inverse, torch::tensor(1.0, opts),
                         torch::tensor(spec.variance, opts), torch::tensor(spec.period, opts));
  }
  return kernel_matrix(spec.kind, x1, x2, torch::tensor(spec.lengthscale, opts),
                       torch::tensor(spec.variance, opts), torch::tensor(spec.period, opts));
}

}  // namespace npe
