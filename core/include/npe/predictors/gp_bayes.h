#pragma once
// The Bayes-optimal predictor for tasks drawn from a known GP prior: the posterior predictive
// averaged over the prior's kernel families and scales, weighted by how well each explains the
// context. A neural process trained on those tasks sees only the context, so this (not the GP
// oracle, which knows each task's kernel) is the best it can do: its moment-matched Gaussian is
// the ceiling for models with Gaussian marginals, its mixture of joint Gaussians the ceiling for
// joint models.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "npe/data/gp_tasks.h"
#include "npe/ground/kernels.h"
#include "npe/ground/prediction.h"
#include "npe/ground/task.h"
#include "npe/predictors/kernel_posterior.h"

namespace npe {

/// The quadrature over each family's scale ell: cells of equal prior mass (equal widths in
/// log ell) per family, then every cell above `refine_weight` of the posterior is halved where
/// halving changes its log posterior mass by `refine_tolerance` or more, for up to
/// `max_refinements` rounds. The periodic family needs a far finer start than the others: its
/// evidence peaks in the period with a width of about period / (2 pi x input range x
/// sqrt(N_c x signal-to-noise)), 10^-3 in log period for 64 points at period 0.25, while the
/// SE and Matérn evidences vary smoothly with their lengthscales. A peak between two starting
/// cells is never found by refining (neither neighbour holds mass), so the periodic grid is
/// set by the convergence study in docs/history/benchmarks.md (mean log-likelihood per target,
/// gp1d): on 512 tasks, 32 starting cells for every family gave -0.226, 64 gave -0.1427 and this
/// default -0.1424; on 256 tasks, 256 / 512 / 2,048 periodic cells gave -0.13254 / -0.13259 /
/// -0.13262.
struct GpBayesOptions {
  int64_t grid_points = 64;
  int64_t periodic_grid_points = 512;
  double refine_weight = 1e-4;
  double refine_tolerance = 1e-3;
  int max_refinements = 16;
};

/// The prior's hypotheses before any data: every kernel family of `prior` at the midpoints of
/// its cells of the log-uniform scale prior (options.grid_points, periodic_grid_points for the
/// periodic family), weighted by their prior mass.
struct GpHypotheses {
  GpTaskConfig prior;
  GpBayesOptions options;
  std::vector<KernelSpec> kernels;
  torch::Tensor log_prior;            ///< [H] float64, log-sum-exp = 0
  std::vector<int64_t> family;        ///< index into prior.kernels, per hypothesis
  std::vector<double> log_scale_low;  ///< the cell [low, high] of log ell, per hypothesis
  std::vector<double> log_scale_high;
};
/// Throws ConfigError for grids of fewer than one point or an invalid prior.
GpHypotheses gp_prior_hypotheses(const GpTaskConfig& prior, const GpBayesOptions& options = {});

/// One task's posterior over hypotheses, from its context alone: the prior's cells, refined
/// where the context is informative, with their posterior weights (prior mass × p(yc | xc, h),
/// log-sum-exp in float64) and the factorised context covariance of each. Nc = 0 gives the
/// prior's cells and weights.
struct GpBayesPosterior {
  std::vector<KernelSpec> kernels;
  std::vector<int64_t> family;  ///< index into the prior's kernels, per hypothesis
  /// The cell [low, high] of log ell each hypothesis stands for (refined cells are narrower).
  std::vector<double> log_scale_low, log_scale_high;
  torch::Tensor log_weights;  ///< [H] float64, normalised (log-sum-exp = 0)
  torch::Tensor xc;           ///< [Nc,Dx] float64
  torch::Tensor chol, alpha;  ///< [H,Nc,Nc], K^-1 yc [H,Nc,Dy]; undefined when Nc = 0
  double noise_std = 0.0;
};
GpBayesPosterior gp_bayes_posterior(const GpHypotheses& hypotheses, const torch::Tensor& xc,
                                    const torch::Tensor& yc);
/// The posterior of every task of a batch.
std::vector<GpBayesPosterior> gp_bayes_posteriors(const GpHypotheses& hypotheses, const Task& task);

/// The hypotheses' predictives at targets xt [Nt,Dx].
struct GpHypothesisPredictives {
  std::vector<KernelSpec> kernels;
  std::vector<int64_t> family;
  torch::Tensor log_weights;  ///< [H] float64, normalised
  torch::Tensor mean;         ///< [H,Nt,Dy] float64
  torch::Tensor variance;     ///< [H,Nt] float64: noisy-output variance, shared by outputs
  torch::Tensor covariance;   ///< [H,Nt,Nt] float64 when asked for (with_covariance)
};
GpHypothesisPredictives gp_hypothesis_predictives(const GpBayesPosterior& posterior,
                                                  const torch::Tensor& xt, int64_t dim_y,
                                                  bool with_covariance = false);
/// The same for task b of a batch, from its context.
GpHypothesisPredictives gp_hypothesis_predictives(const GpHypotheses& hypotheses, const Task& task,
                                                  int64_t b, bool with_covariance = false);

/// The batch functions below take the batch's posteriors (gp_bayes_posteriors), so one
/// refinement serves every output of a task; the GpHypotheses overloads compute them.
/// The mixture's moment-matched Gaussian per target, [B,Nt,Dy] in the dtype of task.xt.
Prediction gp_bayes_predict(const std::vector<GpBayesPosterior>& posteriors, const Task& task);
Prediction gp_bayes_predict(const GpHypotheses& hypotheses, const Task& task);
/// Mean over targets of log p(y_i | context) under the mixture (summed over outputs), [B].
torch::Tensor gp_bayes_marginal_log_likelihood(const std::vector<GpBayesPosterior>& posteriors,
                                               const Task& task);
torch::Tensor gp_bayes_marginal_log_likelihood(const GpHypotheses& hypotheses, const Task& task);
/// log p(y_t | context) / N_t under the mixture of the hypotheses' joint Gaussians, [B].
torch::Tensor gp_bayes_joint_log_likelihood(const std::vector<GpBayesPosterior>& posteriors,
                                            const Task& task);
torch::Tensor gp_bayes_joint_log_likelihood(const GpHypotheses& hypotheses, const Task& task);
/// `count` coherent samples [count,B,Nt,Dy] float64: a hypothesis drawn by its weight, then a
/// draw from its joint predictive.
torch::Tensor gp_bayes_sample(const std::vector<GpBayesPosterior>& posteriors, const Task& task,
                              int64_t count, torch::Generator generator);
/// The mixture's covariance [B,N,N] (N = Nt * Dy, target-major; float64): the weighted
/// hypotheses' covariances plus the spread of their means (law of total covariance).
torch::Tensor gp_bayes_covariance(const std::vector<GpBayesPosterior>& posteriors,
                                  const Task& task);

/// What one task's context says about its kernel: each family's posterior probability and the
/// posterior of its scale in `bins` bins of equal width in log ell over the prior's range. A
/// hypothesis' mass is spread evenly (in log ell) over its cell, so the masses do not depend on
/// where the bin edges fall against the quadrature's cells. Throws ConfigError for bins < 1.
KernelPosterior gp_bayes_kernel_posterior(const GpBayesPosterior& posterior,
                                          const GpTaskConfig& prior, int64_t bins = 40);
/// The differential entropy (nats) of one task's posterior over log ell within kernel family
/// `family` (index into the prior's kernels), each hypothesis' mass spread evenly over its cell
/// and renormalised to the family: how uncertain the context leaves that family's scale (for
/// the periodic family, the period), in units that do not depend on the quadrature's cells. NaN
/// where the family holds no posterior mass or its scale is fixed (cells of no width).
double gp_bayes_scale_entropy(const GpBayesPosterior& posterior, int64_t family);

/// The posterior probability of each kernel family for task b, in the order of the prior's
/// kernels.
std::vector<double> gp_bayes_family_posterior(const GpHypotheses& hypotheses, const Task& task,
                                              int64_t b);

}  // namespace npe
