// Temperature units as files spell them, read by UDUNITS-2: every spelling of a temperature
// converts, and nothing else is ever taken for kelvin.

#include <string>

#include <gtest/gtest.h>

#include "npe/data/temperature_unit.h"
#include "npe/errors.h"

namespace npe {
namespace {

TEST(TemperatureUnit, EverySpellingOfCelsiusConverts) {
  // The list, and the spellings of real files: Ferret's COADS climatology ("DEG C",
  // "Deg C"), PyFerret's ("deg. C", "degrees C", "Degrees C"), NCAR's ("deg_C", "celsius").
  for (const char* units :
       {"DEG C", "degC", "degree_Celsius", "Celsius", "celsius", "deg_C", "\u00b0C", "degrees_C",
        "Deg C", "deg. C", "degrees C", "Degrees C", "degrees_Celsius", "DEGC"}) {
    SCOPED_TRACE(units);
    const auto unit = temperature_unit(units);
    EXPECT_EQ(unit.text, units);
    EXPECT_DOUBLE_EQ(unit.scale, 1.0);
    EXPECT_NEAR(unit.offset, 273.15, 1e-9);
    EXPECT_NEAR(unit.to_kelvin(20.0), 293.15, 1e-9);
    EXPECT_NEAR(unit.from_kelvin(293.15), 20.0, 1e-9);
    EXPECT_FALSE(unit.is_kelvin());
  }
}

TEST(TemperatureUnit, KelvinAndFahrenheitConvert) {
  for (const char* units : {"K", "kelvin", "Kelvin", "degK", "deg_k", "DEG K", "degrees_K"}) {
    SCOPED_TRACE(units);
    EXPECT_TRUE(temperature_unit(units).is_kelvin());
  }
  for (const char* units : {"degF", "\u00b0F", "DEG F", "fahrenheit"}) {
    SCOPED_TRACE(units);
    const auto unit = temperature_unit(units);
    EXPECT_NEAR(unit.to_kelvin(32.0), 273.15, 1e-9);
    EXPECT_NEAR(unit.to_kelvin(212.0), 373.15, 1e-9);
    EXPECT_NEAR(unit.difference_from_kelvin(5.0), 9.0, 1e-9);  // a σ of 5 K is 9 °F
  }
}

void expect_refused(const std::string& units, const std::string& fragment) {
  EXPECT_FALSE(is_temperature_unit(units)) << units;
  try {
    temperature_unit(units, "f.nc: variable 'v'");
    ADD_FAILURE() << "'" << units << "' was taken for a temperature";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("f.nc: variable 'v' ", 0), 0u) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(TemperatureUnit, WhatIsNotATemperatureIsRefusedWithItsUnitNamed) {
  expect_refused("m", "is in 'm' (m), which is not a temperature");
  expect_refused("kg m-2", "is in 'kg m-2'");
  expect_refused("M/S", "is in 'M/S'");
  // "C" is the coulomb in UDUNITS (and in SI): refused, never guessed as Celsius.
  expect_refused("C", "is in 'C'");
  // An angle times a coulomb is what a plain parser makes of this: not a temperature.
  expect_refused("degrees Coulomb", "degrees Coulomb");
  expect_refused("no such unit!", "is in 'no such unit!', a unit UDUNITS-2 cannot read");
  expect_refused("", "has no unit");
  expect_refused("   ", "has no unit");
}

}  // namespace
}  // namespace npe
