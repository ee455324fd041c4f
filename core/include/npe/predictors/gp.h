#pragma once
// Gaussian-process regression: exact posterior predictive (the oracle) and GP regression with
// hyperparameters fitted per task by maximising the log marginal likelihood.

#include <vector>

#include "npe/data/kernels.h"
#include "npe/data/task.h"
#include "npe/data/task_source.h"
#include "npe/models/prediction.h"

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

/// The GP oracle as carried by GP-generated task batches: one kernel per task, shared noise.
class GpOracle final : public TaskOracle {
 public:
  GpOracle(std::vector<KernelSpec> kernels, double noise_std)
      : m_kernels(std::move(kernels)), m_noise_std(noise_std) {}
  Prediction predict(const Task& task) const override;
  std::optional<JointGaussian> predict_joint(const Task& task) const override;
  /// Each task's kernel family (kernel_name).
  std::vector<std::string> task_kinds() const override;
  /// Each task's ell of paper_kernel: the period of a periodic kernel, else the lengthscale;
  /// empty where a kernel has one lengthscale per dimension.
  std::vector<double> task_scales() const override;
  const std::vector<KernelSpec>& kernels() const { return m_kernels; }
  double noise_std() const { return m_noise_std; }

 private:
  std::vector<KernelSpec> m_kernels;
  double m_noise_std;
};

/// Options of the fitted GP baseline.
struct FittedGpOptions {
  /// Adam iterations on the negative log marginal likelihood (the paper uses 1,000).
  int iterations = 1000;
  /// Adam learning rate (the paper uses 0.1).
  double learning_rate = 0.1;
  /// Kernel families tried; per task the one with the highest fitted marginal likelihood wins.
  std::vector<KernelKind> kernels = {KernelKind::SquaredExponential, KernelKind::Periodic,
                                     KernelKind::Matern52};
  /// The periodic kernel (eq. 36: lengthscale 1) has its period fitted, within
  /// [min_period, max_period]: the range of the 1-D tasks' prior on ell (a baseline may know
  /// the hyperprior, not each task's value). Its marginal likelihood is multimodal, so the fit
  /// starts, per task, from the best of `period_grid` log-spaced periods in that range.
  double min_period = 0.25;
  double max_period = 4.0;
  int64_t period_grid = 160;
  /// Squared exponential with one lengthscale per input dimension (ARD) instead of the kernel
  /// families above: the baseline for images and maps (any D_x).
  bool ard = false;
};

/// Result of fitting: the chosen kernel per task and the fitted noise.
struct FittedGp {
  std::vector<KernelSpec> kernels;
  std::vector<double> noise_std;
};

/// Fits lengthscale, signal variance, noise variance and (periodic kernel) period per task and
/// per kernel family by maximising the log marginal likelihood of the context with Adam. With Nc =
/// 0 the prior hyperparameters (lengthscale 1, variance 1, noise 0.1) are returned.
FittedGp fit_gp(const Task& task, const FittedGpOptions& options);

/// fit_gp followed by the posterior predictive of each task.
Prediction gp_fitted_predict(const Task& task, const FittedGpOptions& options);
/// fit_gp followed by the joint posterior predictive of each task.
JointGaussian gp_fitted_joint(const Task& task, const FittedGpOptions& options);

}  // namespace npe
