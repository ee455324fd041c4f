#pragma once
// Numbers in JSON read from files (checkpoint metadata, configurations) end up in integer
// fields, and nlohmann::json converts a floating-point value to an integer with a plain cast:
// undefined behaviour when it is out of range. Documents from files are checked first.

#include <string>

#include <nlohmann/json.hpp>

namespace npe {

/// Throws ConfigError naming `what` when any number in `json` (recursively) is not finite or
/// too large in magnitude to be an int64 (|v| >= 2^63).
void check_json_numbers(const nlohmann::json& json, const std::string& what);

}  // namespace npe
