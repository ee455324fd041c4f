#pragma once
// Name -> specification registry of the neural-process models (one line per kind in
// model_registry.cpp; each specification lives with its model).

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/models/model.h"
#include "npe/models/model_spec.h"

namespace npe {

/// All registered kinds, in a stable display order.
const std::vector<ModelInfo>& model_infos();
/// Throws ConfigError listing the known kinds.
const ModelInfo& model_info(const std::string& kind);
/// The kind's whole specification. Throws ConfigError listing the known kinds.
const ModelSpec& model_spec(const std::string& kind);
/// Builds an untrained model. Throws ConfigError for unknown kinds or invalid sizes.
std::shared_ptr<NeuralProcessImpl> make_model(const ModelConfig& config);

/// `json` with the field `key` set to `value`, checked to be one of the kind's settings (those of
/// ModelConfig::to_json). Throws ConfigError naming the kind's settings.
void set_model_option(nlohmann::json& json, const std::string& key, const nlohmann::json& value);

/// The task's last coordinate is time: kinds that treat time apart from space adapt to it
/// (BSA-TNP: its own RBF attention bias, as in Jenson et al.'s ERA5 model).
void declare_time_coordinate(ModelConfig& config);

}  // namespace npe
