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
/// The periodic kernel is variance * exp(-2 sum_d sin^2(pi |x_d - x'_d| / period) /
/// lengthscale^2); the paper's (eq. 36) is the case lengthscale = 1, where its ell is the period.
struct KernelSpec {
  KernelKind kind = KernelKind::SquaredExponential;
  double lengthscale = 1.0;
  double variance = 1.0;
  double period = 1.0;
  /// Automatic relevance determination: one lengthscale per input dimension (squared
  /// exponential only). When set, `lengthscale` is ignored.
  std::vector<double> ard_lengthscales;
};

/// The kernel of the paper's 1-D tasks (Appendix F.1, eq. 36) for one draw of its scale ell:
/// ell is the lengthscale of the SE and Matern-5/2 kernels and the period of the periodic
/// kernel (whose lengthscale is then 1).
KernelSpec paper_kernel(KernelKind kind, double ell, double variance = 1.0);

/// Covariance matrix between x1 [..., N, Dx] and x2 [..., M, Dx] -> [..., N, M].
/// lengthscale, variance and period broadcast against the leading batch dimensions (shape
/// [...,1,1] or scalar) and may require gradients (used when fitting hyperparameters); period
/// is used by the periodic kernel only.
torch::Tensor kernel_matrix(KernelKind kind, const torch::Tensor& x1, const torch::Tensor& x2,
                            const torch::Tensor& lengthscale, const torch::Tensor& variance,
                            const torch::Tensor& period);

/// Convenience overload for a fixed specification (including ARD lengthscales).
torch::Tensor kernel_matrix(const KernelSpec& spec, const torch::Tensor& x1,
                            const torch::Tensor& x2);

}  // namespace npe
