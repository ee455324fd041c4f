#pragma once
// Joint (multivariate) Gaussian predictives over all targets of a task: the TNP-ND models'
// output (Nguyen & Grover eq. 9) and the GP posterior's.

#include <cstdint>

#include <torch/types.h>

#include "npe/ground/prediction.h"

namespace npe {

/// Largest number of jointly predicted values (N_t * D_y) per task. The covariance costs
/// (N_t D_y)^2 memory and its factorisation (N_t D_y)^3 time; beyond this a joint prediction
/// throws ResourceLimitError instead of exhausting memory.
constexpr int64_t kMaxJointTargets = 4096;

/// N(vec(y) | vec(mean), L L^T) per task, where vec() orders values target-major (target n,
/// output d at index n * D_y + d). mean [B,Nt,Dy] in the model's dtype; scale_tril [B,N,N],
/// N = Nt * Dy, lower triangular with a positive diagonal, float64.
struct JointGaussian {
  torch::Tensor mean;
  torch::Tensor scale_tril;

  /// Per-point marginals: mean and sqrt(diag(L L^T)) in the dtype of `mean`.
  Prediction marginals() const;
  /// The covariance L L^T [B,N,N] (float64).
  torch::Tensor covariance() const;
  /// log N(y | mean, L L^T) / N_t per task: [B] (0 when N_t = 0), differentiable.
  torch::Tensor log_likelihood(const torch::Tensor& y) const;
  /// `count` joint samples [count,B,Nt,Dy] in the dtype of `mean`.
  torch::Tensor sample(int64_t count, const torch::Generator& generator) const;
};

/// Throws ResourceLimitError when N_t * D_y exceeds kMaxJointTargets.
void check_joint_size(int64_t num_targets, int64_t dim_y, const char* what);

/// The joint Gaussian of a covariance [B,N,N] (any float dtype): factorised in float64 with
/// jitter (jittered_cholesky). Differentiable.
JointGaussian joint_gaussian_from_covariance(const torch::Tensor& mean,
                                             const torch::Tensor& covariance);

/// The joint Gaussian of independent marginals (a diagonal model seen as a joint one).
JointGaussian joint_gaussian_from_marginals(const Prediction& marginals);

}  // namespace npe
