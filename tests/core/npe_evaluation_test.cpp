// Evaluation statistics: standard errors over batches (tasks in a batch share N_c), paired
// differences between evaluations of the same tasks, calibration, and the breakdown by task
// kind (GP tasks: the kernel family).

#include <cmath>
#include <sstream>

#include "npe/data/gp_oracle.h"
#include "npe/data/gp_tasks.h"
#include "npe/predictors/gp.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/training/evaluation.h"
#include "test_support.h"

namespace npe {
namespace {

EvalResult evaluate_oracle(int64_t tasks, int64_t batch_size, double shift = 0.0) {
  GpTaskGenerator generator;
  auto oracle = make_predictor("gp-oracle");
  EvalOptions options;
  options.num_tasks = tasks;
  options.batch_size = batch_size;
  options.seed = 3;
  options.shift = {shift};
  return evaluate(*oracle, generator, options);
}

TEST(Evaluation, StandardErrorIsOverBatches) {
  auto result = evaluate_oracle(32, 4);
  ASSERT_EQ(result.batch_ll.size(), 8u);
  auto means = torch::tensor(result.batch_ll, torch::kFloat64);
  EXPECT_NEAR(result.ll_mean, means.mean().item<double>(), 1e-12);
  EXPECT_NEAR(result.ll_stderr, means.std().item<double>() / std::sqrt(8.0), 1e-12);
  EXPECT_EQ(to_json(result).at("stderr_over"), "batches");
}

TEST(Evaluation, OneBatchHasNoStandardError) {
  EXPECT_TRUE(std::isnan(evaluate_oracle(8, 16).ll_stderr));
}

TEST(Evaluation, UnequalLastBatchIsWeightedByItsTasks) {
  auto result = evaluate_oracle(10, 4);
  ASSERT_EQ(result.batch_tasks, (std::vector<int64_t>{4, 4, 2}));
  const double weighted =
      (4 * result.batch_ll[0] + 4 * result.batch_ll[1] + 2 * result.batch_ll[2]) / 10.0;
  EXPECT_NEAR(result.ll_mean, weighted, 1e-12);
}

TEST(Evaluation, PairedDifferenceUsesBatchByBatchDifferences) {
  EvalResult a, b;
  a.batch_ll = {1.0, 2.0, 3.0};
  b.batch_ll = {0.5, 1.5, 2.9};
  a.batch_tasks = b.batch_tasks = {16, 16, 16};
  auto d = paired_difference(a, b);
  EXPECT_NEAR(d.mean, 1.1 / 3.0, 1e-12);
  // Differences 0.5, 0.5, 0.1: sample std 0.2309..., / sqrt(3).
  EXPECT_NEAR(d.standard_error,
              std::sqrt(((2 * std::pow(0.5 - 1.1 / 3, 2)) + std::pow(0.1 - 1.1 / 3, 2)) / 2.0) /
                  std::sqrt(3.0),
              1e-12);
  EXPECT_EQ(d.num_tasks, 48);
  b.batch_tasks = {16, 8, 16};
  NPE_EXPECT_THROW_WITH(paired_difference(a, b), ConfigError, "different batches");
}

// The same tasks shifted: the oracle (stationary kernels) is unchanged, pair by pair, so the
// paired standard error is zero while each cell's own standard error is not.
TEST(Evaluation, ShiftedEvaluationsArePaired) {
  auto at0 = evaluate_oracle(64, 16, 0.0);
  auto at3 = evaluate_oracle(64, 16, 3.0);
  auto d = paired_difference(at3, at0);
  EXPECT_LT(std::abs(d.mean), 1e-6);
  EXPECT_LT(d.standard_error, 1e-6);
  EXPECT_GT(at0.ll_stderr, 1e-3);
}

// The oracle is the true predictive: its central intervals cover their nominal fractions.
TEST(Evaluation, OracleIsCalibrated) {
  auto result = evaluate_oracle(256, 16);
  for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
    EXPECT_NEAR(result.coverage[i], kCoverageLevels[i], 0.02) << kCoverageLevels[i];
  }
  auto json = to_json(result).at("coverage");
  EXPECT_NEAR(json.at("0.9").get<double>(), result.coverage[1], 1e-12);
}

// GP tasks whose every other target output is replaced by exactly 0 (as an image's background
// is): the oracle predicts as before, so the outputs left as drawn stay covered at the nominal
// rates while the zeros are covered at whatever rate |mean| / σ gives.
class TasksWithZeroedTargets : public TaskSource {
 public:
  std::string name() const override { return "gp1d-zeroed"; }
  int64_t dim_x() const override { return 1; }
  int64_t dim_y() const override { return 1; }
  TaskBatch sample(int64_t batch_size, uint64_t seed, const Translation& tau,
                   Split split) const override {
    auto batch = m_gp.sample(batch_size, seed, tau, split);
    batch.task.yt = batch.task.yt.clone();
    batch.task.yt.slice(1, 0, batch.task.yt.size(1), 2).zero_();
    return batch;
  }
  nlohmann::json to_json() const override { return m_gp.to_json(); }
  Translation out_of_range_translation() const override { return {3.0}; }

 private:
  GpTaskGenerator m_gp;
};

TEST(Evaluation, CoverageOfTheOutputsThatAreNotZeroIsReportedApart) {
  auto oracle = make_predictor("gp-oracle");
  EvalOptions options;
  options.num_tasks = 256;
  options.batch_size = 16;
  options.seed = 3;
  const auto result = evaluate(*oracle, TasksWithZeroedTargets(), options);
  EXPECT_NEAR(result.nonzero_fraction, 0.5, 0.01);
  for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
    EXPECT_NEAR(result.coverage_nonzero[i], kCoverageLevels[i], 0.03) << kCoverageLevels[i];
  }
  // The zeros are not draws of the predictive: the coverage over all outputs is another figure
  // (on these tasks, whose noise is small, lower: near the context 0 is outside the interval).
  EXPECT_GT(std::abs(result.coverage[0] - result.coverage_nonzero[0]), 0.05);
  // The log-likelihood of the outputs left alone is the oracle's on the same tasks unchanged
  // (the zeros change no prediction); the zeros, far from the predictive mean of small-noise
  // tasks, have a much lower one. Each is its own figure, not the mean over all outputs.
  const auto unchanged = evaluate(*oracle, GpTaskGenerator(), options);
  ASSERT_TRUE(std::isfinite(result.ll_nonzero_mean) && std::isfinite(result.ll_zero_mean));
  EXPECT_NEAR(result.ll_nonzero_mean, unchanged.ll_mean,
              3.0 * std::hypot(result.ll_nonzero_stderr, unchanged.ll_stderr) + 0.02);
  EXPECT_LT(result.ll_zero_mean, result.ll_nonzero_mean - 1.0);
  auto json = to_json(result);
  EXPECT_NEAR(json.at("coverage_nonzero").at("0.5").get<double>(), result.coverage_nonzero[0],
              1e-12);
  json["per_batch"] = per_batch_json(result);
  const auto back = eval_result_from_json(json);
  EXPECT_EQ(back.coverage_nonzero, result.coverage_nonzero);
  EXPECT_EQ(back.nonzero_fraction, result.nonzero_fraction);
  EXPECT_EQ(back.ll_nonzero_mean, result.ll_nonzero_mean);
  EXPECT_EQ(back.ll_zero_stderr, result.ll_zero_stderr);

  // Where no output is exactly 0 the two coverages are one, and the JSON has only one.
  const auto plain = evaluate_oracle(32, 16);
  EXPECT_EQ(plain.nonzero_fraction, 1.0);
  EXPECT_EQ(plain.coverage_nonzero, plain.coverage);
  EXPECT_FALSE(to_json(plain).contains("coverage_nonzero"));
  EXPECT_TRUE(std::isnan(plain.ll_nonzero_mean) && std::isnan(plain.ll_zero_mean));
}

// Each task's kind is the kernel family it was drawn from, and the kinds' means, weighted by
// their task counts, are the overall mean.
TEST(Evaluation, TaskKindsAreTheKernelFamiliesAndAddUpToTheMean) {
  GpTaskGenerator generator;
  const auto batch = generator.sample(16, derive_seed(3, kTestStream, 0));
  const auto& kernels = dynamic_cast<const GpOracle&>(*batch.oracle).kernels();
  auto result = evaluate_oracle(64, 16);
  ASSERT_EQ(result.task_kind.size(), 64u);
  ASSERT_EQ(result.task_ll.size(), 64u);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(result.task_kind[i], kernel_name(kernels[i].kind));
  // Beside each kind: the task's scale (the period of a periodic kernel, else the lengthscale)
  // and its context size, the same for every task of a batch.
  ASSERT_EQ(result.task_scale.size(), 64u);
  ASSERT_EQ(result.task_num_context.size(), 64u);
  for (size_t i = 0; i < 16; ++i) {
    const bool periodic = kernels[i].kind == KernelKind::Periodic;
    EXPECT_EQ(result.task_scale[i], periodic ? kernels[i].period : kernels[i].lengthscale);
    EXPECT_EQ(result.task_num_context[i], batch.task.num_context());
  }
  for (double scale : result.task_scale) {
    EXPECT_GE(scale, 0.25);  // the gp1d task's range of ell
    EXPECT_LE(scale, 4.0);
  }
  // The per-task values average to the per-batch ones (the oracle is joint: both kinds).
  ASSERT_EQ(result.task_joint_ll.size(), 64u);
  for (size_t b = 0; b < 4; ++b) {
    double ll = 0.0, joint = 0.0;
    for (size_t i = 16 * b; i < 16 * (b + 1); ++i) {
      ll += result.task_ll[i] / 16.0;
      joint += result.task_joint_ll[i] / 16.0;
    }
    EXPECT_NEAR(ll, result.batch_ll[b], 1e-12);
    EXPECT_NEAR(joint, result.batch_joint_ll[b], 1e-12);
  }
  const auto kinds = ll_by_kind(result);
  ASSERT_EQ(kinds.size(), 3u);  // 64 tasks drawn from three families uniformly
  double total = 0.0;
  int64_t tasks = 0;
  for (const auto& [kind, summary] : kinds) {
    total += summary.ll_mean * double(summary.num_tasks);
    tasks += summary.num_tasks;
    EXPECT_GT(summary.ll_stderr, 0.0) << kind;
  }
  EXPECT_EQ(tasks, 64);
  EXPECT_NEAR(total / 64.0, result.ll_mean, 1e-12);
}

// Per kind, a paired difference is the mean of the task differences of that kind; its standard
// error is over batches, as everywhere else.
TEST(Evaluation, PairedDifferenceByKindAveragesTheKindsTasks) {
  EvalResult a, b;
  a.batch_tasks = b.batch_tasks = {2, 2};
  a.task_kind = b.task_kind = {"se", "periodic", "se", "se"};
  a.task_ll = {1.0, 2.0, 3.0, 5.0};
  b.task_ll = {0.0, 0.0, 1.0, 1.0};
  a.task_joint_ll = {10.0, 10.0, 10.0, 10.0};
  b.task_joint_ll = {0.0, 0.0, 0.0, 0.0};
  auto d = paired_difference_by_kind(a, b);
  ASSERT_EQ(d.size(), 2u);
  // se: batch 1 holds one task (difference 1), batch 2 two (2 and 4): (1 + 2 + 4) / 3.
  EXPECT_NEAR(d.at("se").mean, 7.0 / 3.0, 1e-12);
  EXPECT_EQ(d.at("se").num_tasks, 3);
  EXPECT_NEAR(d.at("periodic").mean, 2.0, 1e-12);
  EXPECT_TRUE(std::isnan(d.at("periodic").standard_error));  // one batch holds periodic tasks
  EXPECT_NEAR(paired_difference_by_kind(a, b, true).at("se").mean, 10.0, 1e-12);
  b.task_kind[1] = "se";
  NPE_EXPECT_THROW_WITH(paired_difference_by_kind(a, b), ConfigError, "periodic task");
  EvalResult no_kinds;
  no_kinds.batch_tasks = {2, 2};
  EXPECT_TRUE(paired_difference_by_kind(a, no_kinds).empty());
}

// Grouping by kind and scale splits each kind into octaves of ell: the labels name the octave
// that holds each task's scale, and a result without scales (a ceiling stored before they were
// kept) is grouped by the scales of the other.
TEST(Evaluation, GroupingByScaleSplitsEachKindIntoOctaves) {
  EvalResult a, b;
  a.batch_tasks = b.batch_tasks = {2, 2};
  a.task_kind = b.task_kind = {"se", "periodic", "se", "periodic"};
  a.task_ll = {1.0, 2.0, 3.0, 5.0};
  b.task_ll = {0.0, 0.0, 1.0, 1.0};
  a.task_joint_ll = b.task_joint_ll = {0.0, 0.0, 0.0, 0.0};
  b.task_scale = {0.3, 0.49, 0.7, 3.9};
  const auto d = paired_difference_by_kind(a, b, false, TaskGrouping::kind_and_scale);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_NEAR(d.at("se [0.25,0.5)").mean, 1.0, 1e-12);
  EXPECT_NEAR(d.at("periodic [0.25,0.5)").mean, 2.0, 1e-12);
  EXPECT_NEAR(d.at("se [0.5,1)").mean, 2.0, 1e-12);
  EXPECT_NEAR(d.at("periodic [2,4)").mean, 4.0, 1e-12);
  // By kind alone the same tasks give the kinds' groups.
  EXPECT_EQ(paired_difference_by_kind(a, b).size(), 2u);

  const auto result = evaluate_oracle(64, 16);
  const auto groups = ll_by_kind(result, TaskGrouping::kind_and_scale);
  EXPECT_GT(groups.size(), 3u);  // three kinds, ell spread over four octaves
  int64_t tasks = 0;
  double total = 0.0;
  for (const auto& [group, summary] : groups) {
    tasks += summary.num_tasks;
    total += summary.ll_mean * double(summary.num_tasks);
  }
  EXPECT_EQ(tasks, 64);
  EXPECT_NEAR(total / 64.0, result.ll_mean, 1e-12);
  for (size_t i = 0; i < result.task_scale.size(); ++i) {
    const double low = std::exp2(std::floor(std::log2(result.task_scale[i])));
    std::ostringstream label;
    label << result.task_kind[i] << " [" << low << "," << 2 * low << ")";
    EXPECT_TRUE(groups.count(label.str())) << label.str();
  }
}

// The per-task values survive a JSON round trip (a stored ceiling can be broken down later), and
// rows written before they existed still read.
TEST(Evaluation, PerTaskValuesRoundTripThroughJson) {
  auto result = evaluate_oracle(32, 16);
  auto json = to_json(result);
  json["per_batch"] = per_batch_json(result);
  json["per_task"] = per_task_json(result);
  const auto back = eval_result_from_json(json);
  EXPECT_EQ(back.task_kind, result.task_kind);
  EXPECT_EQ(back.task_ll, result.task_ll);
  EXPECT_EQ(back.task_joint_ll, result.task_joint_ll);
  EXPECT_EQ(back.task_num_context, result.task_num_context);
  EXPECT_EQ(back.task_scale, result.task_scale);
  // Files written before scales and context sizes were kept still read.
  auto older = json;
  older["per_task"].erase("scale");
  older["per_task"].erase("num_context");
  EXPECT_EQ(eval_result_from_json(older).task_kind, result.task_kind);
  EXPECT_TRUE(eval_result_from_json(older).task_scale.empty());
  json["per_task"]["scale"].erase(0);
  NPE_EXPECT_THROW_WITH(eval_result_from_json(json), InvalidInputError, "one value per task");
  json["per_task"]["scale"] = result.task_scale;
  json["per_task"]["ll"].erase(0);
  NPE_EXPECT_THROW_WITH(eval_result_from_json(json), InvalidInputError, "one value per task");
  json.erase("per_task");
  EXPECT_TRUE(eval_result_from_json(json).task_kind.empty());
  EXPECT_TRUE(per_task_json(EvalResult{}).is_null());
}

}  // namespace
}  // namespace npe
