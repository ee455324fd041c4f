#pragma once
// A model kind's own options: typed fields with defaults, ranges and help, visited by name. One
// list per option group (model_option_groups.h) drives the JSON of checkpoints, `--model-option`,
// the range checks and the description users see, so no field can be saved without being loaded
// or checked.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/option_fields.h"

namespace npe {

/// The options of one model kind, as ModelConfig holds them. A kind's options are an
/// OptionsOf<Groups...>; model code reads a group with ModelConfig::options<Group>().
class ModelOptions {
 public:
  virtual ~ModelOptions() = default;
  /// Visits every field of every group, in declaration order.
  virtual void visit(OptionVisitor& visitor) = 0;
  virtual std::unique_ptr<ModelOptions> clone() const = 0;
};

/// A kind's options made of option groups (plain structs with a `fields(OptionVisitor&)`), e.g.
/// `using TeTnpOptions = OptionsOf<TransformerOptions, TeAttentionOptions>;`.
template <typename... Groups>
struct OptionsOf final : ModelOptions, Groups... {
  void visit(OptionVisitor& visitor) override { (Groups::fields(visitor), ...); }
  std::unique_ptr<ModelOptions> clone() const override {
    return std::make_unique<OptionsOf>(*this);
  }
};

/// The fields as JSON, by name.
nlohmann::json options_to_json(const ModelOptions& options);
/// Sets the fields present in `json`; fields it lacks keep their values and names the options do
/// not have are ignored (the metadata of older checkpoints lists every kind's fields). Throws
/// ConfigError "model configuration field '<name>': ..." for a value of the wrong type.
void options_from_json(ModelOptions& options, const nlohmann::json& json);
/// Throws ConfigError for a value below its minimum or not among its choices, and
/// ResourceLimitError for one above its maximum (every size has a generous ceiling, so a hostile
/// or mistyped configuration is refused before it allocates).
void check_option_ranges(const ModelOptions& options);
/// The fields with their current values as defaults.
std::vector<OptionDescription> describe_options(const ModelOptions& options);

}  // namespace npe
