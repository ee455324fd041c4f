#pragma once
// Name -> factory registry of the neural-process models.

#include <memory>
#include <string>
#include <vector>

#include "npe/models/model.h"

namespace npe {

/// What the user is told about a model kind.
struct ModelInfo {
  std::string kind;          ///< registry name, as on the command line
  std::string display_name;  ///< e.g. "TE-TNP"
  std::string description;   ///< one sentence
  bool translation_equivariant = false;
  /// Targets attend to context points (target_attention() returns weights).
  bool attention = false;
  /// Predicts on a regular grid (inputs are rounded to whole grid cells).
  bool on_grid = false;
  /// forward_flops() has a model of this kind.
  bool flop_model = true;
  /// First checkpoint format version whose weights fit this kind's current definition (2 for
  /// the transformer NPs, corrected in format 2: eq. 10 on attention weights, two-layer token
  /// embedders); older checkpoints of the kind are refused.
  int definition_version = 1;
  /// Predicts targets jointly: log_likelihood() is the joint one and sample() draws coherent
  /// functions (TNP-ND, TNP-A kinds).
  bool joint = false;
};

/// All registered kinds, in a stable display order.
const std::vector<ModelInfo>& model_infos();
/// Throws ConfigError listing the known kinds.
const ModelInfo& model_info(const std::string& kind);
/// Builds an untrained model. Throws ConfigError for unknown kinds or invalid sizes.
std::shared_ptr<NeuralProcessImpl> make_model(const ModelConfig& config);

}  // namespace npe
