#pragma once
// Evaluation: mean log-likelihood per target point over many tasks, with its standard error.

#include <array>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/data/task_source.h"
#include "npe/predictors/predictor.h"
#include "npe/progress.h"
#include "npe/seeds.h"

namespace npe {

struct EvalOptions {
  int64_t num_tasks = 1024;
  int64_t batch_size = 16;
  uint64_t seed = 0;
  /// Context and target inputs are translated by this vector (see Translation).
  Translation shift;
  /// Which seed stream the tasks come from (test by default; validation during training).
  uint64_t stream = kTestStream;
  /// Which part of the data (matters for dataset-backed tasks such as images).
  Split split = Split::Test;
};

/// Central predictive intervals whose coverage evaluate() measures.
inline constexpr std::array<double, 3> kCoverageLevels = {0.5, 0.9, 0.95};

struct EvalResult {
  /// Mean log-likelihood per target point, averaged over tasks.
  double ll_mean = 0.0;
  /// Standard error of ll_mean over batches: tasks in a batch share N_c (and an image batch its
  /// draws), so they are not independent; batches are. NaN with a single batch.
  double ll_stderr = 0.0;
  int64_t num_tasks = 0;
  /// Mean log-likelihood and size of each batch, in order: results of two evaluations with the
  /// same seed, batch size and split come from the same tasks batch by batch, so they can be
  /// compared pairwise (paired_difference).
  std::vector<double> batch_ll;
  std::vector<int64_t> batch_tasks;
  /// Joint log-likelihood per target, log p(y_t | context) / N_t, averaged over tasks, with its
  /// standard error over batches and per batch. Equal to ll_mean for predictors that predict
  /// targets independently.
  double ll_joint_mean = 0.0;
  double ll_joint_stderr = 0.0;
  std::vector<double> batch_joint_ll;
  /// Predictors whose per-target predictive is a mixture (Predictor::
  /// exact_marginal_log_likelihood): its log-likelihood per target, where ll_mean is that of the
  /// moment-matched Gaussian. Empty batch_mixture_ll for every other predictor.
  double ll_mixture_mean = 0.0;
  double ll_mixture_stderr = 0.0;
  std::vector<double> batch_mixture_ll;
  /// Fraction of held-out target outputs inside the central predictive interval of each level
  /// in kCoverageLevels (a calibrated model matches the level).
  std::array<double, 3> coverage{};
  /// The same over the target outputs whose true value is not exactly 0, and the fraction of
  /// outputs they are. Where a part of the data is exactly 0 (an image's background), a Gaussian
  /// with a σ floor covers it at every level, so the coverage over all outputs says little about
  /// the rest (the garment, its edges); elsewhere (no output exactly 0) both are equal.
  std::array<double, 3> coverage_nonzero{};
  double nonzero_fraction = 1.0;
  /// The Gaussian log-likelihood per output, over the outputs not exactly 0 and over those
  /// exactly 0 (± standard error over batches), where some are 0 (else NaN). On images the mean
  /// log-likelihood is mostly the background's: a σ near its floor (min_stddev 10⁻³) gains up to
  /// 6 nats on each exactly-zero pixel, so two models can rank one way overall and the other
  /// way on the garment.
  double ll_nonzero_mean = std::numeric_limits<double>::quiet_NaN();
  double ll_nonzero_stderr = std::numeric_limits<double>::quiet_NaN();
  double ll_zero_mean = std::numeric_limits<double>::quiet_NaN();
  double ll_zero_stderr = std::numeric_limits<double>::quiet_NaN();
  /// Where the tasks have kinds (TaskOracle::task_kinds; GP tasks: the kernel family), each
  /// task's kind and its log-likelihoods per target (marginal, as batch_ll, and joint, as
  /// batch_joint_ll), in task order: what ll_by_kind and paired_difference_by_kind break down.
  /// Empty where the tasks have no kinds.
  std::vector<std::string> task_kind;
  std::vector<double> task_ll;
  std::vector<double> task_joint_ll;
  /// Beside task_kind: each task's number of context points, and its scale where the oracle
  /// knows one (TaskOracle::task_scales; else empty), for breakdowns beyond the kinds.
  std::vector<int64_t> task_num_context;
  std::vector<double> task_scale;
  bool cancelled = false;
};

/// ll_mean, ll_stderr (over batches), ll_joint_mean, ll_joint_stderr, tasks, batches and coverage
/// {"0.5": ..., "0.9": ..., "0.95": ...}: the fields every JSON report of an evaluation shares.
nlohmann::json to_json(const EvalResult& result);

/// The per-batch values of an evaluation ({"ll", "joint_ll", "mixture_ll", "tasks"}): with them a
/// result saved by one run can be paired with evaluations of the same tasks in a later run.
nlohmann::json per_batch_json(const EvalResult& result);
/// The result that a to_json object with a "per_batch" member (per_batch_json) describes: the
/// means and standard errors are recomputed from the batches, the coverage is read. Throws
/// InvalidInputError when a member is missing, of the wrong type or inconsistent.
EvalResult eval_result_from_json(const nlohmann::json& json);
/// The per-task values of an evaluation whose tasks have kinds ({"kind", "ll", "joint_ll"});
/// null where they have none. eval_result_from_json reads them back from a "per_task" member.
nlohmann::json per_task_json(const EvalResult& result);

/// Mean and standard error (over batches) of a - b on the batches both evaluated.
struct PairedDifference {
  double mean = 0.0;
  double standard_error = 0.0;
  int64_t num_tasks = 0;
};

/// Paired comparison of two evaluations of the same tasks (same seed, batch size and split;
/// different shifts or predictors). Uses the leading batches both have. Throws ConfigError when
/// the batch sizes differ (the tasks would not be the same).
PairedDifference paired_difference(const EvalResult& a, const EvalResult& b);
/// The same for the joint log-likelihoods (batch_joint_ll).
PairedDifference paired_joint_difference(const EvalResult& a, const EvalResult& b);

/// Mean log-likelihood per target of the tasks of one kind, with its standard error over the
/// batches holding such tasks (tasks of a batch share N_c, so batches stay the unit).
struct KindSummary {
  int64_t num_tasks = 0;
  double ll_mean = 0.0;
  double ll_stderr = 0.0;
};
/// How the breakdowns below group tasks: by kind, or by kind and octave of the task's scale
/// ("periodic [0.25,0.5)": periodic tasks with 0.25 <= ell < 0.5; tasks without a scale keep
/// their kind), which shows how a model's loss changes with the lengthscale or period.
enum class TaskGrouping { kind, kind_and_scale };
/// ll_mean broken down by task group (empty where the result has no task kinds).
std::map<std::string, KindSummary> ll_by_kind(const EvalResult& result,
                                              TaskGrouping grouping = TaskGrouping::kind);
/// ll_by_kind as JSON: {group: {"tasks", "ll_mean", "ll_stderr"}} (an empty object without kinds).
nlohmann::json ll_by_kind_json(const EvalResult& result,
                               TaskGrouping grouping = TaskGrouping::kind);
/// paired_difference (joint: paired_joint_difference) broken down by task group, over the tasks
/// both evaluated (scales from whichever result has them: a stored ceiling may predate them).
/// Empty where either result has no task kinds; throws ConfigError when the two disagree on a
/// task's kind (they did not see the same tasks).
std::map<std::string, PairedDifference> paired_difference_by_kind(
    const EvalResult& a, const EvalResult& b, bool joint = false,
    TaskGrouping grouping = TaskGrouping::kind);

/// Evaluates the predictor on options.num_tasks tasks. The tasks depend only on (seed, shift,
/// batch size, split), so results at different shifts are paired. Throws InvalidInputError when
/// a prediction is not finite, ConfigError for bad options or a predictor that cannot handle
/// the tasks.
EvalResult evaluate(Predictor& predictor, const TaskSource& source, const EvalOptions& options,
                    const ProgressCallback& progress = {});

}  // namespace npe
