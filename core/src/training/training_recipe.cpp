#include "npe/training/training_recipe.h"

#include <algorithm>
#include <set>

#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/models/model_config.h"
#include "npe/models/model_options.h"
#include "npe/models/model_registry.h"

namespace npe {
namespace {

const char* const kWhat = "training recipe";

void refuse_unknown_keys(const nlohmann::json& json, const std::set<std::string>& known,
                         const std::string& what) {
  for (const auto& [key, value] : json.items()) {
    if (known.count(key)) continue;
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
    throw ConfigError(what + " has no setting '" + key + "' (its settings: " + list + ")");
  }
}

nlohmann::json object_field(const nlohmann::json& json, const char* key) {
  if (!json.contains(key)) return nlohmann::json::object();
  const auto& value = json.at(key);
  if (!value.is_object()) {
    throw ConfigError(std::string(kWhat) + " field '" + key + "' must be a JSON object");
  }
  return value;
}

}  // namespace

nlohmann::json TrainingRecipe::to_json() const {
  return {{"version", kVersion},
          {"task", task},
          {"task_options", task_options},
          {"model", model},
          {"size", size},
          {"model_options", model_options},
          {"training", training.to_json()}};
}

TrainingRecipe TrainingRecipe::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError(std::string(kWhat) + " must be a JSON object");
  refuse_unknown_keys(
      json, {"version", "task", "task_options", "model", "size", "model_options", "training"},
      kWhat);
  int version = kVersion;
  read_json_field(json, "version", version, kWhat);
  if (version < 1 || version > kVersion) {
    throw ConfigError(std::string(kWhat) + " version " + std::to_string(version) +
                      " is not one this npe reads (1 to " + std::to_string(kVersion) +
                      "): written by a newer npe?");
  }
  TrainingRecipe recipe;
  read_json_field(json, "task", recipe.task, kWhat);
  read_json_field(json, "model", recipe.model, kWhat);
  read_json_field(json, "size", recipe.size, kWhat);
  if (recipe.model.empty()) throw ConfigError(std::string(kWhat) + " names no model");
  recipe.task_options = object_field(json, "task_options");
  recipe.model_options = object_field(json, "model_options");
  const auto training = object_field(json, "training");
  std::set<std::string> settings{"seed"};
  for (const auto& field : describe_fields(TrainOptions{}.visit_fields())) {
    settings.insert(field.name);
  }
  refuse_unknown_keys(training, settings, std::string(kWhat) + "'s training");
  recipe.training = TrainOptions::from_json(training);
  recipe.training.validate();  // a new job's settings: today's ranges
  return recipe;
}

TrainingSpec TrainingRecipe::resolve(const std::string& command) const {
  // The kind and size first: their errors say more than a task's missing data would.
  model_info(model);
  const auto& sizes = model_sizes();
  if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) {
    std::string list;
    for (const auto& s : sizes) list += (list.empty() ? "" : ", ") + s;
    throw ConfigError("unknown size '" + size + "' (known: " + list + ")");
  }
  auto source = make_task_source(task, task_options);
  auto config = default_model_config(model, size, *source);
  if (!model_options.empty()) {
    // Overrides of single fields (e.g. num_pseudo_tokens=128), checked like a stored config.
    auto json = config.to_json();
    for (const auto& [key, value] : model_options.items()) {
      try {
        set_model_option(json, key, value);
      } catch (const ConfigError& e) {
        throw ConfigError("model option '" + key + "': " + e.what());
      }
    }
    config = ModelConfig::from_json(json);
    check_option_ranges(*config.all_options());  // the rest when the job builds the model
  }
  TrainingSpec spec;
  spec.model = config;
  spec.task = source->to_json();
  spec.size = model_options.empty() ? size : "custom";
  spec.options = training;
  spec.command = command;
  return spec;
}

}  // namespace npe
