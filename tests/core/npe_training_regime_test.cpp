// What a model saw in training, from its checkpoint's task, and the guardrails a scene trips.

#include "npe/data/era5_tasks.h"
#include "npe/data/gp_tasks.h"
#include "npe/data/image_tasks.h"
#include "npe/training/training_regime.h"
#include "test_support.h"

namespace npe {
namespace {

TEST(TrainingRegime, GpTasksGiveTheirInputsAndContextCounts) {
  const auto regime = training_regime(GpTaskConfig().to_json(), false);
  ASSERT_TRUE(regime.known);
  EXPECT_EQ(regime.context_low, -2.0);  // the context's range, as the 1-D tab draws it
  EXPECT_EQ(regime.context_high, 2.0);
  EXPECT_EQ(regime.min_context, 1);
  EXPECT_EQ(regime.max_context, 64);
  EXPECT_TRUE(regime_warnings(regime, {-2.0, 0.0, 1.9}).empty());
  const auto shifted = regime_warnings(regime, {1.0, 2.5});
  ASSERT_EQ(shifted.size(), 1u);
  EXPECT_EQ(shifted[0], "context beyond [-2, 2]");
  std::vector<double> many(65, 0.0);
  ASSERT_EQ(regime_warnings(regime, many).size(), 1u);
  EXPECT_EQ(regime_warnings(regime, many)[0], "65 context points > 64");
  EXPECT_EQ(regime_warnings(regime, {})[0], "0 context points < 1");
}

TEST(TrainingRegime, TranslationEquivariantModelsAreNeverFlaggedForAShift) {
  const auto regime = training_regime(GpTaskConfig().to_json(), true);
  EXPECT_TRUE(regime_warnings(regime, {1e6, 1e6 + 1.0}).empty());
  std::vector<double> many(100, 1e6);
  EXPECT_EQ(regime_warnings(regime, many).size(), 1u);  // the count still is
}

TEST(TrainingRegime, UnknownTasksSayNothing) {
  for (const auto& task :
       {nlohmann::json(), nlohmann::json::object(), nlohmann::json{{"kind", "era5"}},
        nlohmann::json{{"kind", "image"}}, nlohmann::json{{"kind", "pictures"}},
        nlohmann::json{{"kind", "gp1d"}}, nlohmann::json{{"kind", "gp1d"}, {"dim_x", 2}}}) {
    const auto regime = training_regime(task, false);
    EXPECT_FALSE(regime.known) << task.dump();
    EXPECT_TRUE(regime_warnings(regime, {100.0}).empty());
  }
}

TEST(TrainingRegime, SeriesWindowsLieOnTheirScaledWindow) {
  const nlohmann::json task = {{"kind", "series"},
                               {"window", 160.0},
                               {"x_scale", 40.0},
                               {"min_num_context", 1},
                               {"max_num_context", 64}};
  const auto regime = training_regime(task, false);
  ASSERT_TRUE(regime.known);
  EXPECT_EQ(regime.context_low, -2.0);
  EXPECT_EQ(regime.context_high, 2.0);
}

// The Maps tab's guardrails: the context counts of a 15 x 15 window at 5 times (1 % to a third
// of its 1,125 points), and the side of the split latitude that trained (the latitude coordinate
// is positive to the north, which the default task tests on).
TEST(TrainingRegime, GriddedTasksGiveTheirCountsAndTheSideThatTrained) {
  const auto task = Era5TaskConfig().to_json();
  const auto regime = training_regime(task, false);
  ASSERT_TRUE(regime.known);
  EXPECT_EQ(regime.min_context, 12);
  EXPECT_EQ(regime.max_context, 375);
  EXPECT_TRUE(regime_warnings(regime, std::vector<double>(100, -3.0)).empty());
  const auto north = regime_warnings(regime, std::vector<double>(100, 0.5));
  ASSERT_EQ(north.size(), 1u);
  EXPECT_EQ(north[0], "stations north of 54° N, where it did not train");
  EXPECT_EQ(regime_warnings(regime, std::vector<double>(400, -3.0))[0], "400 context points > 375");
  EXPECT_TRUE(regime_warnings(training_regime(task, true), std::vector<double>(100, 9.0)).empty());
  // Trained on the north: the south is where it did not.
  auto south_tests = task;
  south_tests["test_region"] = "south";
  std::vector<double> straddling(20, 1.0);
  straddling[0] = -0.5;
  const auto south = regime_warnings(training_regime(south_tests, false), straddling);
  ASSERT_EQ(south.size(), 1u);
  EXPECT_EQ(south[0], "stations south of 54° N, where it did not train");
}

// The Images tab's guardrails: the context counts of a 56 x 56 canvas (1 % to a third of its
// 3,136 pixels), and the training translations, which only a model that is not translation
// equivariant is flagged for leaving.
TEST(TrainingRegime, TranslatedImageTasksGiveTheirCountsAndTranslations) {
  ImageTaskConfig central;
  central.train_max_translation = 4;
  const auto regime = training_regime(central.to_json(), false);
  ASSERT_TRUE(regime.known);
  EXPECT_EQ(regime.min_context, 32);
  EXPECT_EQ(regime.max_context, 1045);
  const std::vector<double> context(314, 20.0);
  EXPECT_TRUE(regime_warnings(regime, context, {-4.0, 4.0}).empty());
  const auto moved = regime_warnings(regime, context, {0.0, -9.0});
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0], "Δ beyond the training translations: |Δ| = 9 > 4");
  EXPECT_TRUE(
      regime_warnings(training_regime(central.to_json(), true), context, {0.0, -9.0}).empty());
  EXPECT_EQ(regime_warnings(regime, std::vector<double>(2000, 20.0))[0],
            "2000 context points > 1045");
}

}  // namespace
}  // namespace npe
