#pragma once
// Name -> factory registry of the neural-process models.

#include <memory>
#include <string>
#include <vector>

#include "npe/model.h"

namespace npe {

/// What the user is told about a model kind.
struct ModelInfo {
  std::string kind;          ///< registry name, as on the command line
  std::string display_name;  ///< e.g. "TE-TNP"
  std::string description;   ///< one sentence
  bool translation_equivariant = false;
};

/// All registered kinds, in a stable display order.
const std::vector<ModelInfo>& model_infos();
/// Throws ConfigError listing the known kinds.
const ModelInfo& model_info(const std::string& kind);
/// Builds an untrained model. Throws ConfigError for unknown kinds or invalid sizes.
std::shared_ptr<NeuralProcessImpl> make_model(const ModelConfig& config);

}  // namespace npe
