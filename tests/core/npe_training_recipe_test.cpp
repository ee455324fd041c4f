// The training recipe: what the Training tab hands `npe train --spec` and what npe train's
// options describe, read strictly (a typo is an error, not a default) and resolved to a job.

#include <gtest/gtest.h>

#include "npe/errors.h"
#include "npe/models/model_config.h"
#include "npe/training/training_recipe.h"

namespace npe {
namespace {

TrainingRecipe tnp_recipe() {
  TrainingRecipe recipe;
  recipe.task = "gp1d";
  recipe.task_options = {{"max_num_context", 12}};
  recipe.model = "tnp";
  recipe.size = "small";
  recipe.model_options = {{"num_layers", 2}};
  recipe.training.steps = 30;
  recipe.training.learning_rate = 2e-3;
  recipe.training.lr_schedule = "cosine";
  recipe.training.seed = 11;
  return recipe;
}

TEST(TrainingRecipe, ItsJsonReadsBackToTheSameRecipe) {
  const auto recipe = tnp_recipe();
  const auto json = recipe.to_json();
  const auto back = TrainingRecipe::from_json(json);
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.training.seed, 11u);
  EXPECT_EQ(back.model_options.value("num_layers", 0), 2);
}

TEST(TrainingRecipe, OnlyTheModelIsRequired) {
  const auto recipe = TrainingRecipe::from_json({{"model", "cnp"}});
  EXPECT_EQ(recipe.task, "gp1d");
  EXPECT_EQ(recipe.size, "small");
  EXPECT_EQ(recipe.training.to_json(), TrainOptions{}.to_json());
  EXPECT_THROW(TrainingRecipe::from_json(nlohmann::json::object()), ConfigError);
}

TEST(TrainingRecipe, AMisspelledOrOutOfRangeSettingIsRefusedByName) {
  auto expect_refused = [](nlohmann::json json, const std::string& words) {
    try {
      TrainingRecipe::from_json(json);
      ADD_FAILURE() << "accepted " << json.dump();
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  auto json = tnp_recipe().to_json();
  auto typo = json;
  typo["modle_options"] = nlohmann::json::object();
  expect_refused(typo, "modle_options");
  typo = json;
  typo["training"]["learning_rat"] = 0.1;
  expect_refused(typo, "learning_rat");
  auto range = json;
  range["training"]["learning_rate"] = 1e-9;
  expect_refused(range, "learning_rate");
  auto type = json;
  type["training"]["steps"] = "many";
  expect_refused(type, "steps");
  auto fraction = json;
  fraction["training"]["steps"] = 6.9;
  expect_refused(fraction, "'steps': 6.9 is not a whole number");
  auto negative = json;
  negative["training"]["seed"] = -1;
  expect_refused(negative, "'seed': -1 is negative");
  auto shape = json;
  shape["model_options"] = nlohmann::json::array();
  expect_refused(shape, "model_options");
  auto newer = json;
  newer["version"] = TrainingRecipe::kVersion + 1;
  expect_refused(newer, "version");
  expect_refused(nlohmann::json::array(), "JSON object");
}

TEST(TrainingRecipe, ResolvesToThePresetWithItsOverridesApplied) {
  const auto spec = tnp_recipe().resolve("npe train --spec r.json");
  auto preset = default_model_config("tnp", "small");
  auto expected = preset.to_json();
  expected["num_layers"] = 2;
  EXPECT_EQ(spec.model.to_json(), ModelConfig::from_json(expected).to_json());
  EXPECT_EQ(spec.size, "custom");  // overrides make it no preset's
  EXPECT_EQ(spec.task.value("max_num_context", 0), 12);
  EXPECT_EQ(spec.options.learning_rate, 2e-3);
  EXPECT_EQ(spec.command, "npe train --spec r.json");

  auto plain = tnp_recipe();
  plain.model_options = nlohmann::json::object();
  EXPECT_EQ(plain.resolve({}).size, "small");
}

TEST(TrainingRecipe, UnknownNamesAreRefusedWhenResolved) {
  auto recipe = tnp_recipe();
  recipe.model = "tnp-x";
  EXPECT_THROW(recipe.resolve({}), ConfigError);
  recipe = tnp_recipe();
  recipe.size = "huge";
  EXPECT_THROW(recipe.resolve({}), ConfigError);
  recipe = tnp_recipe();
  recipe.task = "gp2d";
  EXPECT_THROW(recipe.resolve({}), ConfigError);
  recipe = tnp_recipe();
  recipe.model_options = {{"num_pseudo_tokens", 8}};  // a PT-TNP's, not a TNP's
  try {
    recipe.resolve({});
    ADD_FAILURE() << "a TNP took num_pseudo_tokens";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model option 'num_pseudo_tokens'"), std::string::npos)
        << e.what();
  }
  recipe = tnp_recipe();
  recipe.model_options = {{"num_layers", 0}};
  EXPECT_THROW(recipe.resolve({}), ConfigError);
}

}  // namespace
}  // namespace npe
