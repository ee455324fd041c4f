// The predictor registry (neural models and GP baselines behind one interface), the shared
// jittered Cholesky and the SE-ARD baseline.

#include "npe/data/gp_tasks.h"
#include "npe/linalg.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/equivariance.h"
#include "npe/predictors/predictor_registry.h"
#include "test_support.h"

namespace npe {
namespace {

TEST(JitteredCholesky, FactorisesSingularMatricesWithJitter) {
  auto x = torch::zeros({5, 1}, torch::kFloat64);  // five identical inputs: rank one
  auto k = kernel_matrix(KernelSpec{}, x, x);
  auto chol = jittered_cholesky(k);
  EXPECT_LT((chol.matmul(chol.transpose(0, 1)) - k).abs().max().item<double>(), 1e-4);
  auto spd = torch::eye(3, torch::kFloat64) * 2;
  EXPECT_TRUE(
      torch::allclose(jittered_cholesky(spd), torch::eye(3, torch::kFloat64) * std::sqrt(2), 1e-6));
  NPE_EXPECT_THROW_WITH(jittered_cholesky(-torch::eye(3, torch::kFloat64)), InvalidInputError,
                        "not positive definite");
  auto nan = torch::full({2, 2}, std::nan(""), torch::kFloat64);
  NPE_EXPECT_THROW_WITH(jittered_cholesky(nan), InvalidInputError, "NaN");
}

TEST(PredictorRegistry, ListsBaselinesAndEveryNeuralKindWithCapabilities) {
  EXPECT_TRUE(predictor_info("gp-oracle").capabilities.needs_oracle);
  EXPECT_FALSE(predictor_info("gp-se-ard").capabilities.trainable);
  EXPECT_TRUE(predictor_info("tetnp").capabilities.translation_equivariant);
  EXPECT_TRUE(predictor_info("tetnp").capabilities.attention);
  EXPECT_FALSE(predictor_info("pttnp").capabilities.translation_equivariant);
  EXPECT_TRUE(predictor_info("convcnp2d").capabilities.on_grid);
  for (const auto& m : model_infos()) EXPECT_TRUE(predictor_info(m.kind).capabilities.trainable);
  NPE_EXPECT_THROW_WITH(predictor_info("gp-magic"), ConfigError, "known: gp-oracle");
  NPE_EXPECT_THROW_WITH(make_predictor("tetnp"), ConfigError, "give a checkpoint");
}

TEST(PredictorRegistry, OracleNeedsTasksThatCarryOne) {
  GpTaskGenerator generator;
  auto batch = generator.sample(2, 1);
  auto oracle = make_predictor("gp-oracle");
  auto p = oracle->predict(batch);
  EXPECT_EQ(p.mean.sizes(), batch.task.yt.sizes());
  NPE_EXPECT_THROW_WITH(oracle->predict(TaskBatch{batch.task, {}}), ConfigError,
                        "generating process is known");
}

TEST(PredictorRegistry, UntrainedNeuralPredictorRunsOnTheCpu) {
  PredictorOptions options;
  options.untrained = true;
  auto predictor = make_predictor("cnp", options);
  GpTaskGenerator generator;
  auto batch = generator.sample(2, 1);
  auto p = predictor->predict(batch);
  EXPECT_TRUE(p.mean.device().is_cpu());
  EXPECT_EQ(p.mean.scalar_type(), torch::kFloat32);
  ASSERT_NE(predictor->neural_model(), nullptr);
  EXPECT_FALSE(predictor->target_attention(batch.task).defined());  // CNP has no attention
}

// The cap on GP baselines' context size is a clear error, not minutes of computing.
TEST(PredictorRegistry, GpBaselinesReportTheirContextCap) {
  GpTaskConfig config;
  config.min_num_context = config.max_num_context = 40;
  auto batch = GpTaskGenerator(config).sample(1, 2);
  PredictorOptions options;
  options.gp_max_context = 30;
  for (const std::string name : {"gp-oracle", "gp-fitted", "gp-se-ard"}) {
    NPE_EXPECT_THROW_WITH(make_predictor(name, options)->predict(batch), ResourceLimitError,
                          "limited to 30 context points here (40 given)");
  }
  options.gp_max_context = 40;
  options.fitted.iterations = 5;
  EXPECT_NO_THROW(make_predictor("gp-fitted", options)->predict(batch));
}

// GP baselines are stationary: translating the data translates the prediction.
TEST(PredictorRegistry, GpBaselinesAreTranslationEquivariant) {
  GpTaskGenerator generator;
  auto batch = generator.sample(2, 3);
  PredictorOptions options;
  options.fitted.iterations = 20;
  for (const std::string name : {"gp-oracle", "gp-fitted"}) {
    auto predictor = make_predictor(name, options);
    EXPECT_LT(equivariance_error(*predictor, batch, {7.5}), 1e-3) << name;
  }
}

// Data varying fast along one input and slowly along the other: the fitted ARD lengthscales
// must reflect that, and the fit must predict held-out points well.
TEST(SeArdGp, FitsOneLengthscalePerDimension) {
  torch::manual_seed(5);
  auto x = torch::rand({1, 120, 2}, torch::kFloat64) * 6 - 3;
  auto f = torch::sin(3.0 * x.select(-1, 0)) + 0.1 * x.select(-1, 1);
  auto y = (f + 0.05 * torch::randn_like(f)).unsqueeze(-1);
  Task task{x.slice(1, 0, 100), y.slice(1, 0, 100), x.slice(1, 100), y.slice(1, 100)};
  FittedGpOptions options;
  options.ard = true;
  options.iterations = 200;
  auto fitted = fit_gp(task, options);
  ASSERT_EQ(fitted.kernels[0].ard_lengthscales.size(), 2u);
  EXPECT_LT(fitted.kernels[0].ard_lengthscales[0], fitted.kernels[0].ard_lengthscales[1]);
  auto p = gp_fitted_predict(task, options);
  EXPECT_GT(log_likelihood_per_task(p, task.yt).item<double>(), 0.5);
}

// For every input dimension exactly one fitted baseline is the tools' default (gp-fitted in 1-D,
// gp-se-ard beyond): the choice follows capabilities, not names compared in each tool.
TEST(PredictorCapabilities, ExactlyOneFittedBaselineIsTheDefaultForEachInputDimension) {
  for (int64_t dim_x : {1, 2, 3, 10}) {
    std::vector<std::string> defaults;
    for (const auto& info : predictor_infos()) {
      const auto& caps = info.capabilities;
      if (caps.trainable || caps.needs_oracle || caps.needs_gp_prior) continue;
      if (caps.default_for_dim_x(dim_x)) defaults.push_back(info.name);
    }
    ASSERT_EQ(defaults.size(), 1U) << "D_x = " << dim_x;
    EXPECT_EQ(defaults[0], dim_x == 1 ? "gp-fitted" : "gp-se-ard");
  }
}

}  // namespace
}  // namespace npe
