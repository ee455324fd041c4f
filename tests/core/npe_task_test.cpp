// Validation of task tensors and translation helpers.

#include "npe/data/era5_tasks.h"
#include "npe/data/function_scene.h"
#include "npe/data/gp_tasks.h"
#include "npe/data/image_tasks.h"
#include "npe/errors.h"
#include "npe/ground/prediction.h"
#include "npe/models/model_registry.h"
#include "npe/training/training.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::random_task;

// The 1-D tab's task, built in core from a plain scene: float64 inputs (a shift of 1e6 keeps
// its digits), an even query grid over the visible range, held-out points moved by Δ, and the
// truth's kernel as the oracle only when there is a truth.
TEST(FunctionScenes, BecomeATaskWithTheTruthsHeldOutPointsAndOracle) {
  FunctionScene scene;
  scene.shift = 1e6;
  scene.context_x = {1e6 + 0.125, 1e6 - 1.5};
  scene.context_y = {0.3, -0.2};
  scene.query_low = 1e6 - 4;
  scene.query_high = 1e6 + 4;
  scene.num_queries = 5;
  auto plain = scene_task(scene);
  EXPECT_EQ(plain.batch.task.xc.scalar_type(), torch::kFloat64);
  EXPECT_EQ(plain.batch.task.xc[0][0][0].item<double>(), 1e6 + 0.125);
  ASSERT_EQ(plain.batch.task.xt.sizes(), (std::vector<int64_t>{1, 5, 1}));
  EXPECT_EQ(plain.batch.task.xt[0][2][0].item<double>(), 1e6);
  EXPECT_EQ(plain.batch.task.xt[0][4][0].item<double>(), 1e6 + 4);
  EXPECT_FALSE(plain.batch.has_oracle());
  EXPECT_FALSE(plain.held_out_x.defined());

  scene.held_out_x = {0.5, -2.0};
  scene.held_out_y = {1.0, 2.0};
  // Held-out points without a kernel (the rows of a series): scored, with no oracle.
  const auto real_data = scene_task(scene);
  EXPECT_FALSE(real_data.batch.has_oracle());
  ASSERT_TRUE(real_data.held_out_x.defined());
  EXPECT_EQ(real_data.held_out_x[0][0][0].item<double>(), 1e6 + 0.5);
  EXPECT_EQ(real_data.held_out_y[0][1][0].item<double>(), 2.0);
  scene.truth_kernel = paper_kernel(KernelKind::SquaredExponential, 0.5);
  scene.truth_noise_std = 0.2;
  auto with_truth = scene_task(scene);
  ASSERT_TRUE(with_truth.batch.has_oracle());
  EXPECT_EQ(with_truth.held_out_x[0][1][0].item<double>(), 1e6 - 2.0);
  EXPECT_EQ(with_truth.held_out_y[0][1][0].item<double>(), 2.0);
  const auto oracle = with_truth.batch.oracle->predict(with_truth.batch.task);
  EXPECT_TRUE(torch::isfinite(oracle.mean).all().item<bool>());

  scene.context_y.pop_back();
  EXPECT_THROW(scene_task(scene), InvalidInputError);
  scene.context_y.push_back(0.0);
  scene.query_high = scene.query_low - 1;
  EXPECT_THROW(scene_task(scene), InvalidInputError);
  // One query: the hovered x alone (the attention overlay's task).
  scene.query_high = scene.query_low = 1e6 + 0.25;
  scene.num_queries = 1;
  const auto one = scene_task(scene);
  ASSERT_EQ(one.batch.task.xt.sizes(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(one.batch.task.xt[0][0][0].item<double>(), 1e6 + 0.25);
  scene.num_queries = 0;
  EXPECT_THROW(scene_task(scene), InvalidInputError);
}

TEST(Task, ValidTaskPasses) {
  EXPECT_NO_THROW(validate_task(random_task(2, 3, 4, 2, 3), true));
}

TEST(Task, WrongRankIsReportedWithShapes) {
  auto task = random_task(2, 3, 4);
  task.xc = task.xc.squeeze(-1);
  NPE_EXPECT_THROW_WITH(validate_task(task), InvalidInputError, "[2, 3]");
}

TEST(Task, MismatchedContextCountsAreRejected) {
  auto task = random_task(2, 3, 4);
  task.yc = torch::randn({2, 5, 1});
  NPE_EXPECT_THROW_WITH(validate_task(task), InvalidInputError, "different numbers of context");
}

TEST(Task, NaNIsRejected) {
  auto task = random_task(1, 3, 4);
  task.yc[0][1][0] = NAN;
  NPE_EXPECT_THROW_WITH(validate_task(task), InvalidInputError, "NaN");
}

TEST(Task, ModelRejectsWrongInputDimension) {
  auto model = make_model(testing::tiny_config("tnp", 1, 1));
  NPE_EXPECT_THROW_WITH(model->predict(random_task(1, 3, 4, 2, 1)), InvalidInputError,
                        "built for D_x = 1");
}

TEST(Task, TranslationByVectorMovesEveryInput) {
  auto task = random_task(2, 3, 4, 2, 1);
  auto moved = task.translated({1.0, -2.0});
  auto tau = torch::tensor({1.0f, -2.0f});
  EXPECT_TRUE(torch::allclose(moved.xc - tau, task.xc));
  EXPECT_TRUE(torch::allclose(moved.xt - tau, task.xt));
  EXPECT_TRUE(torch::equal(moved.yc, task.yc));
}

TEST(Prediction, LogLikelihoodOfStandardNormalAtZero) {
  Prediction p{torch::zeros({1, 2, 1}), torch::ones({1, 2, 1})};
  auto ll = log_likelihood_per_task(p, torch::zeros({1, 2, 1}));
  EXPECT_NEAR(ll.item<double>(), -0.5 * std::log(2 * M_PI), 1e-6);
}

// Every configuration reads its fields one way (npe/json_fields.h): a value of the wrong type is
// a ConfigError naming the configuration and the field, and a number stored as null (JSON has
// no NaN) reads back as NaN.
TEST(ConfigurationFields, AWrongTypeNamesTheConfigurationAndTheField) {
  using nlohmann::json;
  NPE_EXPECT_THROW_WITH(GpTaskConfig::from_json(json{{"noise_std", "loud"}}), ConfigError,
                        "task configuration field 'noise_std'");
  NPE_EXPECT_THROW_WITH(ImageTaskConfig::from_json(json{{"canvas", "big"}}), ConfigError,
                        "image task configuration field 'canvas'");
  NPE_EXPECT_THROW_WITH(Era5TaskConfig::from_json(json{{"window", "wide"}}), ConfigError,
                        "ERA5 task configuration field 'window'");
  NPE_EXPECT_THROW_WITH(TrainOptions::from_json(json{{"steps", "many"}}), ConfigError,
                        "training options field 'steps'");
  NPE_EXPECT_THROW_WITH(ModelConfig::from_json(json{{"kind", "tnp"}, {"dim_model", "wide"}}),
                        ConfigError, "model configuration field 'dim_model'");
  NPE_EXPECT_THROW_WITH(ModelConfig::from_json(json{{"kind", 3}}), ConfigError,
                        "model configuration field 'kind'");
  EXPECT_TRUE(std::isnan(Era5TaskConfig::from_json(json{{"mean", nullptr}}).mean));
  EXPECT_EQ(Era5TaskConfig::from_json(json{{"mean", 281.5}}).mean, 281.5);
  EXPECT_EQ(GpTaskConfig::from_json(json{{"noise_std", 0.5}}).noise_std, 0.5);
}

// An integer field takes a whole number in its range, also written as a float (64.0, as other
// writers of JSON do), and refuses what nlohmann's conversion would truncate (6.9 → 6) or wrap
// (-1 → 2^64 − 1 in an unsigned field).
TEST(ConfigurationFields, IntegerFieldsTakeOnlyWholeNumbersThatFit) {
  using nlohmann::json;
  EXPECT_EQ(TrainOptions::from_json(json{{"steps", 64.0}}).steps, 64);
  EXPECT_EQ(TrainOptions::from_json(json::parse(R"({"seed": 18446744073709551615})")).seed,
            18446744073709551615ull);
  NPE_EXPECT_THROW_WITH(TrainOptions::from_json(json{{"steps", 6.9}}), ConfigError,
                        "training options field 'steps': 6.9 is not a whole number");
  NPE_EXPECT_THROW_WITH(TrainOptions::from_json(json{{"seed", -1}}), ConfigError,
                        "field 'seed': -1 is negative");
  NPE_EXPECT_THROW_WITH(TrainOptions::from_json(json{{"seed", -5.0}}), ConfigError,
                        "field 'seed': -5.0 is negative");
  NPE_EXPECT_THROW_WITH(TrainOptions::from_json(json{{"steps", 1e300}}), ConfigError,
                        "field 'steps': 1e+300 is out of range");
  NPE_EXPECT_THROW_WITH(TrainOptions::from_json(json::parse(R"({"steps": 18446744073709551615})")),
                        ConfigError, "field 'steps': 18446744073709551615 is out of range");
}

}  // namespace
}  // namespace npe
