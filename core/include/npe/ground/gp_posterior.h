#pragma once
// The exact Gaussian-process posterior under a known kernel and noise: what the GP tasks' oracle
// predicts, what the explorer's 1-D scene shows as the truth, and what the fitted and Bayes GP
// baselines compute once their hyperparameters are chosen. Ground layer: below data/.

#include <vector>

#include <torch/types.h>

#include "npe/ground/joint_gaussian.h"
#include "npe/ground/kernels.h"
#include "npe/ground/prediction.h"
#include "npe/ground/task.h"

namespace npe {

/// Posterior predictive of noisy outputs at xt [Nt,Dx] given xc [Nc,Dx], yc [Nc,Dy], under a
/// zero-mean GP with the given kernel and Gaussian noise of standard deviation noise_std.
/// Output dimensions are independent with the same kernel. Computed in float64 with a jittered
/// Cholesky factorisation, so duplicate inputs are fine. Nc = 0 gives the prior.
/// Returns mean/stddev [Nt,Dy] in the dtype of xt.
Prediction gp_posterior_predictive(const KernelSpec& kernel, double noise_std,
                                   const torch::Tensor& xc, const torch::Tensor& yc,
                                   const torch::Tensor& xt);

/// Joint posterior predictive of the noisy outputs at all targets: mean [Nt,Dy] in the dtype of
/// xt, covariance [Nt*Dy, Nt*Dy] (float64, target-major; output dimensions independent).
struct GpJointPosterior {
  torch::Tensor mean;
  torch::Tensor covariance;
};
GpJointPosterior gp_posterior_joint(const KernelSpec& kernel, double noise_std,
                                    const torch::Tensor& xc, const torch::Tensor& yc,
                                    const torch::Tensor& xt);
/// The joint posteriors of a batch, one kernel and noise level per task, as a JointGaussian.
/// Throws ResourceLimitError beyond kMaxJointTargets values per task.
JointGaussian gp_joint_predictive(const Task& task, const std::vector<KernelSpec>& kernels,
                                  const std::vector<double>& noise_std);

/// Exact GP log marginal likelihood log p(yc | xc) summed over output dimensions, for a batch:
/// xc [B,Nc,Dx], yc [B,Nc,Dy]; lengthscale, variance, noise_var broadcastable to [B,1,1].
/// Differentiable in the hyperparameters. Returns [B].
torch::Tensor gp_log_marginal_likelihood(KernelKind kind, const torch::Tensor& xc,
                                         const torch::Tensor& yc, const torch::Tensor& lengthscale,
                                         const torch::Tensor& variance,
                                         const torch::Tensor& noise_var,
                                         const torch::Tensor& period);

/// GP oracle: per task, the posterior predictive under the kernel and noise that generated it.
/// kernels.size() must equal task.batch_size().
Prediction gp_oracle_predict(const Task& task, const std::vector<KernelSpec>& kernels,
                             double noise_std);

}  // namespace npe
