#pragma once
// Stationary covariance functions used by the GP task generator and the GP baselines.

#include <string>
#include <vector>

#include <torch/types.h>

namespace npe {

enum class KernelKind { SquaredExponential, Periodic, Matern52 };

/// Short lowercase name ("se", "periodic", "matern52").
std::string kernel_name(KernelKind kind);
/// Inverse of kernel_name; throws ConfigError listing the valid names.
KernelKind kernel_kind_from_name(const std::string& name);
std::vector<KernelKind> all_kernel_kinds();

/// A fully specified kernel: k(x, x') = variance * r(|x - x'| / lengthscale).
/// The periodic kernel is exp(-2 sin^2(pi |d| / period) / lengthscale^2), summed over input
/// dimensions in the exponent.
struct KernelSpec {
  KernelKind kind = KernelKind::SquaredExponential;
  double lengthscale = 1.0;
  double variance = 1.0;
  double period = 1.0;
  /// Automatic relevance determination: one lengthscale per input dimension (squared
  /// exponential only). When set, `lengthscale` is ignored.
  std::vector<double> ard_lengthscales;
};

/// Covariance matrix between x1 [..., N, Dx] and x2 [..., M, Dx] -> [..., N, M].
/// lengthscale and variance broadcast against the leading batch dimensions (shape [...,1,1] or
/// scalar) and may require gradients (used when fitting hyperparameters).
torch::Tensor kernel_matrix(KernelKind kind, const torch::Tensor& x1, const torch::Tensor& x2,
                            const torch::Tensor& lengthscale, const torch::Tensor& variance,
                            double period = 1.0);

/// Convenience overload for a fixed specification (including ARD lengthscales).
torch::Tensor kernel_matrix(const KernelSpec& spec, const torch::Tensor& x1,
                            const torch::Tensor& x2);

}  // namespace npe
