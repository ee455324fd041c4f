#pragma once
// A neural-process model's configuration: the fields every model has and its kind's own options.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/models/model_option_groups.h"
#include "npe/models/model_options.h"

namespace npe {

/// A model's configuration: what every model has (its kind, input and output dimensions, the
/// Gaussian head) and the kind's own options (model_option_groups.h), typed and held by value.
struct ModelConfig {
  ModelConfig() = default;
  /// A configuration of `kind` with the kind's default options (the paper's sizes; see
  /// default_model_config for the named sizes). Throws ConfigError for an unknown kind.
  explicit ModelConfig(std::string kind, int64_t dim_x = 1, int64_t dim_y = 1);
  ModelConfig(const ModelConfig& other);
  ModelConfig& operator=(const ModelConfig& other);
  ModelConfig(ModelConfig&&) noexcept = default;
  ModelConfig& operator=(ModelConfig&&) noexcept = default;
  ~ModelConfig();

  /// Registry name (model_infos(): "cnp", "tnp", "tnpnd", ...). Set by the constructor: the
  /// options are the kind's.
  std::string kind;
  int64_t dim_x = 1;
  int64_t dim_y = 1;
  /// Of the D_x inputs, the last dim_features are properties of the place (ERA5: elevation and
  /// land-sea fraction), not coordinates: translation-equivariant models feed them into the
  /// tokens with the outputs and measure distances on the first dim_coordinates() inputs only;
  /// input_scale and the reference point apply to coordinates only. Models that see x directly
  /// (CNP, TNP, PT-TNP, the TNP-D family) take them as further inputs.
  int64_t dim_features = 0;
  /// Gaussian head: false gives one learned noise level per output dimension.
  bool heteroscedastic = true;
  /// Lower bound added to the predictive standard deviation.
  double min_stddev = 1e-3;
  /// Inputs are multiplied by this before the model sees them (e.g. pixel coordinates to units
  /// of half an image). Must be 1 for the on-grid models, which need whole-cell coordinates.
  double input_scale = 1.0;
  /// Each task's outputs centred on its context's own mean (per output; 0 with no context)
  /// before the model sees them, and the predictions moved back: a model that takes a series
  /// whose level has moved far from its training data's (a colder week, a hotter transformer)
  /// as it takes its training data. Scales are left to the task's standardisation: a deviation
  /// estimated from a handful of context points collapses (measured: a TE-TNP on ETTh1 that
  /// divided by it too trained to a loss of 7.5 nats where the plain one reached -0.06). Off in
  /// every checkpoint written before it existed.
  bool centre_per_task = false;

  int64_t dim_coordinates() const { return dim_x - dim_features; }

  /// The kind's option group `Group` (e.g. TransformerOptions). Throws ConfigError when the kind
  /// has no such group.
  template <typename Group>
  Group& options() {
    if (auto* group = find_options<Group>()) return *group;
    throw_missing_group();
  }
  template <typename Group>
  const Group& options() const {
    return const_cast<ModelConfig*>(this)->options<Group>();
  }
  /// The group, or nullptr when the kind has none.
  template <typename Group>
  Group* find_options() {
    return dynamic_cast<Group*>(m_options.get());
  }
  template <typename Group>
  const Group* find_options() const {
    return dynamic_cast<const Group*>(m_options.get());
  }
  /// All of the kind's options (none for a default-constructed configuration).
  const ModelOptions* all_options() const { return m_options.get(); }

  /// The fields every model has and the kind's own options, nothing of other kinds.
  nlohmann::json to_json() const;
  /// Missing fields take their defaults; fields the kind does not have are ignored (checkpoints
  /// of earlier versions list every kind's fields); wrong types throw ConfigError, and so does
  /// an unknown kind.
  static ModelConfig from_json(const nlohmann::json& json);

 private:
  [[noreturn]] void throw_missing_group() const;
  std::unique_ptr<ModelOptions> m_options;
};

/// The named sizes, smallest first: "small" (CPU-trainable in minutes), "medium" (small with
/// the paper's transformer: 5 layers of 8 heads x 16) and "paper" (Appendix F).
const std::vector<std::string>& model_sizes();

/// A named size (model_sizes()). Throws ConfigError for an unknown kind or size.
ModelConfig default_model_config(const std::string& kind, const std::string& size,
                                 int64_t dim_x = 1, int64_t dim_y = 1);

class TaskSource;
/// The size preset adapted to a task (D_x, D_y and the task's own settings, such as the
/// paper's D_z = 32 for images). Throws ConfigError.
ModelConfig default_model_config(const std::string& kind, const std::string& size,
                                 const TaskSource& task);

/// The named size whose preset for `task` `config` has in every option the presets differ in
/// (widths, depths, heads), else "custom": a model configured field by field with a preset's
/// values is recorded and shown as that size, also with options on top of it (a σ per pixel).
std::string matching_model_size(const ModelConfig& config, const TaskSource& task);

}  // namespace npe
