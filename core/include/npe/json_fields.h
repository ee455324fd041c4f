#pragma once
// Reading configuration objects (tasks, models, training options) from JSON: the one way every
// from_json of the project takes a field, so a wrong value is reported alike everywhere, naming
// the configuration and the field.

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "npe/errors.h"

namespace npe {

/// Reads json[key] into `field` when the key is present; leaves `field` (its default) otherwise.
/// Throws ConfigError "<what> field '<key>': <reason>" for a value of the wrong type.
template <typename T>
void read_json_field(const nlohmann::json& json, const char* key, T& field,
                     const std::string& what) {
  if (!json.contains(key)) return;
  try {
    json.at(key).get_to(field);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(what + " field '" + key + "': " + e.what());
  }
}

/// As read_json_field for a number that may be unset: JSON has no NaN, so NaN is written as
/// null (json_number_or_null) and read back from it.
inline void read_json_number_or_nan(const nlohmann::json& json, const char* key, double& field,
                                    const std::string& what) {
  if (json.contains(key) && json.at(key).is_null()) {
    field = std::nan("");
    return;
  }
  read_json_field(json, key, field, what);
}

/// A number for JSON: finite values as they are, NaN and infinities as null.
inline nlohmann::json json_number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace npe
