#pragma once
// Reading configuration objects (tasks, models, training options) from JSON: the one way every
// from_json of the project takes a field, so a wrong value is reported alike everywhere, naming
// the configuration and the field.

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "npe/errors.h"

namespace npe {

/// Why a JSON number cannot be the integer type T, or empty when it can: nlohmann's conversion
/// truncates 6.9 to 6 and wraps -1 into an unsigned field. A whole number written as a float
/// (64.0, as other writers of JSON do) is that integer.
template <typename T>
std::string json_integer_problem(const nlohmann::json& value) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  using limits = std::numeric_limits<T>;
  if (value.is_number_unsigned()) {
    return value.get<uint64_t>() > static_cast<uint64_t>(limits::max())
               ? value.dump() + " is out of range"
               : "";
  }
  if (value.is_number_integer()) {
    const auto v = value.get<int64_t>();
    if (v < 0 && std::is_unsigned_v<T>) return value.dump() + " is negative";
    if (v < static_cast<int64_t>(limits::min())) return value.dump() + " is out of range";
    if (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(limits::max())) {
      return value.dump() + " is out of range";
    }
    return "";
  }
  const double v = value.get<double>();
  if (!std::isfinite(v) || std::floor(v) != v) return value.dump() + " is not a whole number";
  if (v < 0 && std::is_unsigned_v<T>) return value.dump() + " is negative";
  // Every integer type's range is [min, 2^digits), both ends exact as doubles.
  if (v < static_cast<double>(limits::min()) || v >= std::ldexp(1.0, limits::digits)) {
    return value.dump() + " is out of range";
  }
  return "";
}

/// Reads json[key] into `field` when the key is present; leaves `field` (its default) otherwise.
/// Throws ConfigError "<what> field '<key>': <reason>" for a value of the wrong type, and for an
/// integer field, a number that is not a whole one or does not fit it.
template <typename T>
void read_json_field(const nlohmann::json& json, const char* key, T& field,
                     const std::string& what) {
  if (!json.contains(key)) return;
  const auto& value = json.at(key);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (value.is_number()) {
      if (const auto problem = json_integer_problem<T>(value); !problem.empty()) {
        throw ConfigError(what + " field '" + key + "': " + problem);
      }
    }
  }
  try {
    value.get_to(field);
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
