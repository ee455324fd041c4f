#pragma once
// Where a model's log-likelihood falls short of a reference predictor's (the Bayes ceiling), task
// by task: how much of the gap its mean costs and how much its spread, and how the gap varies
// with a property of each task (for the 1-D GP tasks, how uncertain the Bayes predictor is
// about the period).

#include <functional>
#include <string>
#include <vector>

#include "npe/data/task_source.h"
#include "npe/predictors/predictor.h"
#include "npe/progress.h"
#include "npe/training/evaluation.h"

namespace npe {

/// One task's gap, LL(reference) - LL(model) in nats per target (Gaussian marginals, summed over
/// outputs, averaged over targets), split at the reference's standard deviations:
///   gap = [LL(mu_r, sigma_r) - LL(mu_m, sigma_r)]  mean part: the model's mean, scored with the
///                                                  reference's spread,
///       + [LL(mu_m, sigma_r) - LL(mu_m, sigma_m)]  spread part: what the model's own spread
///                                                  loses (or, negative, gains) given its mean.
/// With the reference's spread both parts are in the reference's units, so a model whose mean
/// matches the reference's has no mean part whatever its spread.
struct TaskGap {
  std::string kind;    ///< the task's kind where the oracle names one (GP tasks: the kernel)
  double scale = 0.0;  ///< the task's scale where the oracle knows it (else NaN)
  int64_t num_context = 0;
  double covariate = 0.0;  ///< the caller's per-task value (task_covariate), else NaN
  double gap = 0.0;
  double mean_part = 0.0;
  double spread_part = 0.0;
};

/// A per-task property computed from a batch (one value per task), e.g. the entropy of the
/// Bayes predictor's posterior over the period.
using TaskCovariate = std::function<std::vector<double>(const TaskBatch&)>;

/// The gaps of each model against `reference` on the same options.num_tasks tasks (the
/// reference predicts each batch once). result[m][t]: model m, task t. Throws as evaluate()
/// does, and InvalidInputError for a non-finite prediction.
std::vector<std::vector<TaskGap>> decompose_gaps(const std::vector<Predictor*>& models,
                                                 Predictor& reference, const TaskSource& source,
                                                 const EvalOptions& options,
                                                 const TaskCovariate& task_covariate = {},
                                                 const ProgressCallback& progress = {});

/// Mean and standard error (over tasks) of each part, for the tasks `keep` selects.
struct GapSummary {
  int64_t num_tasks = 0;
  double gap = 0.0, gap_stderr = 0.0;
  double mean_part = 0.0, mean_part_stderr = 0.0;
  double spread_part = 0.0, spread_part_stderr = 0.0;
};
GapSummary summarise_gaps(const std::vector<TaskGap>& gaps,
                          const std::function<bool(const TaskGap&)>& keep = {});

/// Ordinary least squares y = b0 + b1 x1 + ... + bk xk over n points: the coefficients (b0
/// first), their standard errors and R². With two predictors each slope is the change with its
/// own predictor while the other is held fixed (what separates two related properties).
struct LinearFit {
  int64_t points = 0;
  std::vector<double> coefficients, stderrs;
  double r_squared = 0.0;
};
/// predictors[j][i]: predictor j at point i. Throws ConfigError for fewer than k + 2 points,
/// lengths that differ, or predictors that are constant or collinear.
LinearFit fit_linear(const std::vector<std::vector<double>>& predictors,
                     const std::vector<double>& y);

}  // namespace npe
