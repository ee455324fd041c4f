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

namespace npe {

/// Visits the fields of an option group by name: to write them to JSON, read them from it,
/// check their ranges or describe them.
class OptionVisitor {
 public:
  virtual ~OptionVisitor() = default;
  virtual void field(const char* name, int64_t& value, int64_t min, int64_t max,
                     const char* help) = 0;
  virtual void field(const char* name, double& value, double min, double max, const char* help) = 0;
  virtual void field(const char* name, bool& value, const char* help) = 0;
  virtual void field(const char* name, std::string& value, const std::vector<std::string>& choices,
                     const char* help) = 0;
};

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

/// One field as users can be told about it: its type, help, default and range or choices.
struct OptionDescription {
  std::string name;
  std::string type;  ///< "integer", "number", "boolean" or "choice"
  std::string help;
  nlohmann::json default_value;
  nlohmann::json min, max;           ///< numbers only
  std::vector<std::string> choices;  ///< choices only
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
