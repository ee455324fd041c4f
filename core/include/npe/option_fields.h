#pragma once
// Typed settings with defaults, ranges and help, visited by name: one list per group of settings
// drives their JSON, their range checks and the description users see (a model kind's option
// groups, model_options.h; the training settings, TrainOptions::fields), so no field can be
// saved without being loaded or checked, and no limit is written twice.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npe {

/// Visits typed fields by name: to write them to JSON, read them from it, check their ranges or
/// describe them.
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

/// One field as users can be told about it: its type, help, default and range or choices.
struct OptionDescription {
  std::string name;
  std::string type;  ///< "integer", "number", "boolean" or "choice"
  std::string help;
  nlohmann::json default_value;
  nlohmann::json min, max;           ///< numbers only
  std::vector<std::string> choices;  ///< choices only
};

/// Visits every field of one group of settings (e.g. `[&](OptionVisitor& v) { o.fields(v); }`).
using FieldVisit = std::function<void(OptionVisitor&)>;

/// The fields as JSON, by name.
nlohmann::json fields_to_json(const FieldVisit& visit);
/// Sets the fields present in `json`; fields it lacks keep their values and other names are
/// ignored. Throws ConfigError "<what> field '<name>': ..." for a value of the wrong type.
void fields_from_json(const FieldVisit& visit, const nlohmann::json& json, const std::string& what);
/// Throws ConfigError "<what>: <name> must be ..." for a value below its minimum (or NaN) or not
/// among its choices, and ResourceLimitError for one above its maximum.
void check_field_ranges(const FieldVisit& visit, const std::string& what);
/// The fields with their current values as defaults.
std::vector<OptionDescription> describe_fields(const FieldVisit& visit);

}  // namespace npe
