#include "npe/json_numbers.h"

#include <cmath>

#include "npe/errors.h"

namespace npe {

void check_json_numbers(const nlohmann::json& json, const std::string& what) {
  if (json.is_number_float()) {
    const double v = json.get<double>();
    // 2^63: the first magnitude an int64 cannot hold.
    if (!std::isfinite(v) || std::fabs(v) >= 9223372036854775808.0) {
      throw ConfigError(what + ": the number " + json.dump() + " is out of range");
    }
  } else if (json.is_structured()) {
    for (const auto& item : json) check_json_numbers(item, what);
  }
}

}  // namespace npe
