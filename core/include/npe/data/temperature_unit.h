#pragma once
// Temperature units as a file states them (CF units strings: "K", "degC", "DEG C", "°F", ...),
// read and converted by UDUNITS-2, the library the CF conventions name for them. Models work in
// kelvin; data are read, shown and written in the file's own unit.

#include <optional>
#include <string>

namespace npe {

/// A temperature unit: kelvin = scale * value + offset (scale > 0).
struct TemperatureUnit {
  std::string text;  ///< as the file states it ("DEG C")
  double scale = 1.0;
  double offset = 0.0;

  bool is_kelvin() const { return scale == 1.0 && offset == 0.0; }
  double to_kelvin(double value) const { return scale * value + offset; }
  double from_kelvin(double kelvin) const { return (kelvin - offset) / scale; }
  /// A temperature difference (a standard deviation, an error) in this unit, from kelvin.
  double difference_from_kelvin(double kelvin) const { return kelvin / scale; }
};

/// The temperature unit `units` names. Throws DataError naming the unit when UDUNITS-2 cannot
/// parse it, when it is not a temperature ("m", "kg m-2", "C": coulomb) and when it is empty
/// (kelvin and degrees Celsius cannot be told apart): never taken for kelvin. The message
/// begins with `subject` ("data.nc: variable 'AIRT' is in 'm' (m), which is not a temperature").
TemperatureUnit temperature_unit(const std::string& units,
                                 const std::string& subject = "the variable");

/// temperature_unit without the error: nothing when `units` is not a temperature.
std::optional<TemperatureUnit> parse_temperature_unit(const std::string& units);

/// Whether `units` name a temperature (parse_temperature_unit has one).
bool is_temperature_unit(const std::string& units);

}  // namespace npe
