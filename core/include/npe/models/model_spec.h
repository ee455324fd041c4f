#pragma once
// What defines a model kind: what the user is told about it, the options it reads, how to build
// it, its parameter count and its FLOP count. Each kind's specification lives in the model's own
// source file and is listed once in model_registry.cpp.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "npe/models/flops.h"
#include "npe/models/model_config.h"

namespace npe {

class NeuralProcessImpl;

/// What the user is told about a model kind.
struct ModelInfo {
  std::string kind;          ///< registry name, as on the command line
  std::string display_name;  ///< e.g. "TE-TNP"
  std::string description;   ///< one sentence
  bool translation_equivariant = false;
  /// Targets attend to context points (target_attention() returns weights).
  bool attention = false;
  /// Predicts on a regular grid (inputs are rounded to whole grid cells, so input_scale is 1).
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
  /// Takes inputs that are properties of a place (ModelConfig::dim_features > 0).
  bool place_features = true;
};

/// One model kind: what users are told about it, its options (the option groups it reads, with
/// their defaults and ranges: exactly what its checkpoints record and what `--model-option` may
/// set), how to build it and its FLOP count.
struct ModelSpec {
  ModelInfo info;
  /// The kind's default options, e.g. options_of<TeTnpOptions>.
  std::function<std::unique_ptr<ModelOptions>()> make_options;
  std::function<std::shared_ptr<NeuralProcessImpl>(const ModelConfig&)> make;
  /// The number of parameters of the kind's model with this configuration, counted from its
  /// options (models/parameter_terms.h) before anything is allocated: make_model refuses a model
  /// too large by it.
  std::function<double(const ModelConfig&)> parameter_count;
  /// Forward FLOPs of one task (forward_flops multiplies by the batch).
  std::function<double(const ModelConfig&, const BatchShape&)> flops_per_task;
  /// The "paper" size preset's changes from ModelConfig's defaults, if any.
  std::function<void(ModelConfig&)> paper_size;
  /// How the kind treats a last coordinate that is time (ERA5), if differently from space.
  std::function<void(ModelConfig&)> time_coordinate;
};

/// The factory of a kind's default options.
template <typename Options>
std::unique_ptr<ModelOptions> options_of() {
  return std::make_unique<Options>();
}

/// The factory of a model class constructed from a ModelConfig.
template <typename Model>
std::shared_ptr<NeuralProcessImpl> make_model_of(const ModelConfig& config) {
  return std::make_shared<Model>(config);
}

}  // namespace npe
