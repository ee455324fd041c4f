#pragma once
// Gaussian-process regression with hyperparameters fitted per task by maximising the log
// marginal likelihood (the fitted-GP baseline). The exact posterior is npe/ground/gp_posterior.h.

#include <vector>

#include "npe/ground/joint_gaussian.h"
#include "npe/ground/kernels.h"
#include "npe/ground/prediction.h"
#include "npe/ground/task.h"

namespace npe {

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
