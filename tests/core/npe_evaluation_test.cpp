// Evaluation statistics: standard errors over batches (tasks in a batch share N_c), paired
// differences between evaluations of the same tasks, and calibration.

#include <cmath>

#include "npe/data/gp_tasks.h"
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

}  // namespace
}  // namespace npe
