// Greedy sensor placement (Andersson et al. 2023): for a GP the model-driven proposals are the
// exact variance-reduction argmax; a translation-equivariant model's proposals move with the
// data; the acquisition map is finite everywhere; cancelling stops it.

#include <filesystem>
#include <memory>

#include "npe/data/gp_oracle.h"
#include "npe/predictors/gp.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/predictors/sensor_placement.h"
#include "test_support.h"

namespace npe {
namespace {

// Four context points on [-2, 2], the region [-2, 2] as targets, 41 candidates over it.
struct PlacementScene {
  TaskBatch batch;
  torch::Tensor candidates;

  static PlacementScene make(double shift = 0.0) {
    PlacementScene s;
    const auto xc = torch::tensor({-1.7, -0.4, 0.2, 1.9}, torch::kFloat32).view({1, 4, 1});
    const auto yc = torch::tensor({0.3, -0.8, -0.5, 1.1}, torch::kFloat32).view({1, 4, 1});
    const auto xt = torch::linspace(-2.0, 2.0, 60, torch::kFloat32).view({1, 60, 1});
    s.batch.task = {xc + shift, yc, xt + shift, {}};
    s.candidates = torch::linspace(-2.0, 2.0, 41, torch::kFloat32).view({41, 1}) + shift;
    return s;
  }
};

std::shared_ptr<const TaskOracle> se_oracle() {
  return std::make_shared<GpOracle>(
      std::vector<KernelSpec>{paper_kernel(KernelKind::SquaredExponential, 0.5)}, 0.1);
}

TEST(SensorPlacement, ForAGpTheGreedyProposalsAreTheExactVarianceReductionArgmax) {
  auto scene = PlacementScene::make();
  scene.batch.oracle = se_oracle();
  auto oracle = make_predictor("gp-oracle");
  PlacementOptions options;
  options.count = 4;
  options.candidate_batch = 16;  // several blocks
  const auto greedy = place_sensors(*oracle, scene.batch, scene.candidates, options);
  const auto exact = exact_gp_placement(*oracle, scene.batch, scene.candidates, 4);
  EXPECT_EQ(greedy.chosen, exact.chosen);
  ASSERT_EQ(greedy.scores.size(), 4u);
  for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(greedy.scores[k], exact.scores[k], 1e-3);
  EXPECT_GT(greedy.scores.back(), 0.0);
  EXPECT_TRUE(torch::isfinite(greedy.first_scores).all().item<bool>());
  EXPECT_LT(testing::max_abs_diff(greedy.first_scores.to(torch::kFloat32),
                                  exact.first_scores.to(torch::kFloat32)),
            1e-3);
}

TEST(SensorPlacement, ATranslationEquivariantModelsProposalsMoveWithTheData) {
  const std::filesystem::path shipped =
      std::filesystem::path(NPE_SHIPPED_MODELS_DIR) / "gp1d" / "tetnp.pt";
  if (!std::filesystem::exists(shipped)) GTEST_SKIP() << "no shipped TE-TNP";
  auto model = load_predictor(shipped);
  PlacementOptions options;
  options.count = 3;
  const auto here = place_sensors(*model, PlacementScene::make().batch,
                                  PlacementScene::make().candidates, options);
  const auto moved = PlacementScene::make(2.5);
  const auto there = place_sensors(*model, moved.batch, moved.candidates, options);
  EXPECT_EQ(here.chosen, there.chosen);
  EXPECT_LT(testing::max_abs_diff(here.first_scores.to(torch::kFloat32),
                                  there.first_scores.to(torch::kFloat32)),
            1e-3);
  EXPECT_TRUE(torch::isfinite(here.first_scores).all().item<bool>());
}

TEST(SensorPlacement, ThePredictiveStdScoreProposesTheMostUncertainPlace) {
  auto scene = PlacementScene::make();
  scene.batch.oracle = se_oracle();
  auto oracle = make_predictor("gp-oracle");
  PlacementOptions options;
  options.score = AcquisitionScore::predictive_std;
  const auto placed = place_sensors(*oracle, scene.batch, scene.candidates, options);
  ASSERT_EQ(placed.chosen.size(), 1u);
  EXPECT_EQ(placed.chosen[0], placed.first_scores.argmax().item<int64_t>());
  const Task at{scene.batch.task.xc, scene.batch.task.yc, scene.candidates.unsqueeze(0), {}};
  const auto p = oracle->predict({at, se_oracle()});
  EXPECT_NEAR(placed.scores[0], p.stddev.max().item<double>(), 1e-5);
}

TEST(SensorPlacement, CancellingStopsAndSaysSo) {
  auto scene = PlacementScene::make();
  scene.batch.oracle = se_oracle();
  auto oracle = make_predictor("gp-oracle");
  PlacementOptions options;
  options.count = 3;
  options.candidate_batch = 8;
  int calls = 0;
  options.progress = [&](const Progress&) { return ++calls < 2; };
  const auto placed = place_sensors(*oracle, scene.batch, scene.candidates, options);
  EXPECT_FALSE(placed.complete);
  EXPECT_TRUE(placed.chosen.empty());
  EXPECT_EQ(calls, 2);
}

TEST(SensorPlacement, BadRequestsAreClearErrors) {
  auto scene = PlacementScene::make();
  scene.batch.oracle = se_oracle();
  auto oracle = make_predictor("gp-oracle");
  PlacementOptions too_many;
  too_many.count = 42;
  NPE_EXPECT_THROW_WITH(place_sensors(*oracle, scene.batch, scene.candidates, too_many),
                        InvalidInputError, "between 1 and the 41 candidates");
  NPE_EXPECT_THROW_WITH(place_sensors(*oracle, scene.batch, torch::zeros({5, 2})),
                        InvalidInputError, "D_x = 1");
  auto nan = scene.candidates.clone();
  nan[3][0] = std::numeric_limits<float>::quiet_NaN();
  NPE_EXPECT_THROW_WITH(place_sensors(*oracle, scene.batch, nan), InvalidInputError, "NaN");
  auto two = scene.batch;
  two.task = {torch::zeros({2, 3, 1}), torch::zeros({2, 3, 1}), torch::zeros({2, 4, 1}), {}};
  NPE_EXPECT_THROW_WITH(place_sensors(*oracle, two, scene.candidates), InvalidInputError,
                        "one task at a time");
  auto cnp = make_predictor("cnp", [] {
    PredictorOptions o;
    o.untrained = true;
    return o;
  }());
  NPE_EXPECT_THROW_WITH(exact_gp_placement(*cnp, scene.batch, scene.candidates, 1), ConfigError,
                        "closed-form");
}

}  // namespace
}  // namespace npe
