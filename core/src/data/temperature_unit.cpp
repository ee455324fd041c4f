#include "npe/data/temperature_unit.h"

#include <cctype>
#include <cmath>
#include <memory>
#include <mutex>
#include <regex>

#include <udunits2.h>

#include "npe/errors.h"

namespace npe {
namespace {

// UDUNITS-2 parses with global state (its yacc parser): one call at a time.
std::mutex& udunits_mutex() {
  static std::mutex m;
  return m;
}

struct UnitFree {
  void operator()(ut_unit* u) const { ut_free(u); }
};
using UnitPtr = std::unique_ptr<ut_unit, UnitFree>;

// The unit database, read once (under udunits_mutex) and kept for the program's life.
ut_system* unit_system() {
  static ut_system* system = [] {
    ut_set_error_message_handler(ut_ignore);  // its messages go to stderr; ours say more
    return ut_read_xml(nullptr);
  }();
  if (!system) {
    throw DataError(
        "UDUNITS-2 cannot read its unit database (package udunits2-data, or $UDUNITS2_XML_PATH)");
  }
  return system;
}

// COARDS-era files (Ferret, NOAA PMEL's climatologies) write "DEG C", "Deg C", "deg. C",
// "degrees C" and "deg_k". UDUNITS reads a space as a product, so "degrees C" would be an angle
// times a coulomb, and it does not parse "DEG C" or "deg. C" at all. The degree word and the
// letter are rewritten as UDUNITS's own spelling of the temperature ("deg_C", "deg_F", "deg_K"),
// which it then parses and converts; every other string goes to UDUNITS as it is.
std::string join_degree_and_letter(const std::string& units) {
  static const std::regex spelled(R"(^\s*(deg|degs|degree|degrees)\.?[\s_]*([CFK])\s*$)",
                                  std::regex::icase);
  std::smatch m;
  if (!std::regex_match(units, m, spelled)) return units;
  return std::string("deg_") + static_cast<char>(std::toupper(m[2].str()[0]));
}

struct Parsed {
  std::optional<TemperatureUnit> unit;
  std::string problem;  ///< why not, when there is no unit
};

Parsed parse(const std::string& units) {
  Parsed out;
  if (units.find_first_not_of(" \t") == std::string::npos) {
    out.problem = "has no unit: kelvin and degrees Celsius cannot be told apart";
    return out;
  }
  const std::lock_guard lock(udunits_mutex());
  ut_system* system = unit_system();
  UnitPtr unit(ut_parse(system, join_degree_and_letter(units).c_str(), UT_UTF8));
  if (!unit) {
    out.problem = "is in '" + units + "', a unit UDUNITS-2 cannot read";
    return out;
  }
  UnitPtr kelvin(ut_get_unit_by_name(system, "kelvin"));
  if (!kelvin || !ut_are_convertible(unit.get(), kelvin.get())) {
    char definition[128] = {};
    ut_format(unit.get(), definition, sizeof definition - 1, UT_ASCII | UT_DEFINITION);
    out.problem = "is in '" + units + "' (" + definition + "), which is not a temperature";
    return out;
  }
  cv_converter* to_kelvin = ut_get_converter(unit.get(), kelvin.get());
  if (!to_kelvin) {
    out.problem = "is in '" + units + "', which UDUNITS-2 cannot convert to kelvin";
    return out;
  }
  TemperatureUnit t;
  t.text = units;
  t.offset = cv_convert_double(to_kelvin, 0.0);
  t.scale = cv_convert_double(to_kelvin, 1.0) - t.offset;
  cv_free(to_kelvin);
  // UDUNITS's conversions are exact for the units it knows; rounding of 1 - 0 is not.
  if (std::abs(t.scale - 1.0) < 1e-12) t.scale = 1.0;
  if (!(t.scale > 0.0)) {
    out.problem = "is in '" + units + "', a temperature unit that runs backwards";
    return out;
  }
  out.unit = t;
  return out;
}

}  // namespace

TemperatureUnit temperature_unit(const std::string& units, const std::string& subject) {
  auto parsed = parse(units);
  if (!parsed.unit) {
    throw DataError(subject + " " + parsed.problem + ": NP Explorer's models predict temperatures");
  }
  return *parsed.unit;
}

std::optional<TemperatureUnit> parse_temperature_unit(const std::string& units) {
  return parse(units).unit;
}

bool is_temperature_unit(const std::string& units) {
  return parse_temperature_unit(units).has_value();
}

}  // namespace npe
