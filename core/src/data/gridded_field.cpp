#include "npe/data/gridded_field.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>

#include <torch/torch.h>

#include "data/readers/readers.h"
#include "npe/data/temperature_unit.h"
#include "npe/errors.h"

namespace npe {
namespace {

// Days since 1970-01-01 of a proleptic-Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

double regular_step(const std::vector<double>& axis, const char* name,
                    const std::filesystem::path& path) {
  if (axis.size() < 2) return 0.0;
  const double step = axis[1] - axis[0];
  for (size_t i = 1; i < axis.size(); ++i) {
    const double d = axis[i] - axis[i - 1];
    if (!(std::abs(d - step) <= 1e-6 * std::max(1.0, std::abs(step))) || d == 0.0) {
      readers::fail(path, std::string("the ") + name +
                              " axis is not a regular grid (only regular latitude/longitude "
                              "grids are supported)");
    }
  }
  return step;
}

}  // namespace

namespace readers {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem) {
  throw DataError(path.string() + ": " + problem);
}

void normalise_layout(GriddedField& f) {
  const auto& path = f.source;
  if (!f.values.defined() || f.values.dim() != 3) fail(path, "the field is not [time, lat, lon]");
  const bool time_invariant = f.valid_times.empty() && f.values.size(0) == 1;
  if ((!time_invariant && f.values.size(0) != static_cast<int64_t>(f.valid_times.size())) ||
      f.values.size(1) != static_cast<int64_t>(f.latitudes.size()) ||
      f.values.size(2) != static_cast<int64_t>(f.longitudes.size())) {
    fail(path, "coordinate lengths do not match the field's shape");
  }
  if (f.values.numel() == 0) fail(path, "the field has no values");
  for (double& lon : f.longitudes) {
    if (!std::isfinite(lon)) fail(path, "non-finite longitude");
    lon = std::fmod(lon + 180.0, 360.0);
    if (lon < 0) lon += 360.0;
    lon -= 180.0;
  }
  for (double lat : f.latitudes) {
    if (!(lat >= -90.0 && lat <= 90.0)) fail(path, "latitude outside [-90, 90]");
  }
  // Sort every axis; the field follows with index_select.
  auto sorted_index = [](const auto& axis, bool descending) {
    std::vector<int64_t> order(axis.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return descending ? axis[a] > axis[b] : axis[a] < axis[b];
    });
    return order;
  };
  auto apply = [&](auto& axis, const std::vector<int64_t>& order, int64_t dim) {
    auto copy = axis;
    for (size_t i = 0; i < order.size(); ++i) axis[i] = copy[order[i]];
    f.values = f.values.index_select(dim, torch::tensor(order, torch::kLong));
  };
  if (!time_invariant) apply(f.valid_times, sorted_index(f.valid_times, false), 0);
  apply(f.latitudes, sorted_index(f.latitudes, true), 1);
  apply(f.longitudes, sorted_index(f.longitudes, false), 2);
  for (size_t i = 1; i < f.valid_times.size(); ++i) {
    if (f.valid_times[i] == f.valid_times[i - 1]) {
      fail(path, "two fields share the valid time " + format_utc(f.valid_times[i]));
    }
  }
  regular_step(f.latitudes, "latitude", path);
  regular_step(f.longitudes, "longitude", path);
  f.values = f.values.to(torch::kFloat32).contiguous();
}

}  // namespace readers

double GriddedField::latitude_step() const {
  return latitudes.size() < 2 ? 0.0 : std::abs(latitudes[1] - latitudes[0]);
}

double GriddedField::longitude_step() const {
  return longitudes.size() < 2 ? 0.0 : std::abs(longitudes[1] - longitudes[0]);
}

int64_t utc_seconds(int year, int month, int day, int hour, int minute, int second) {
  return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
         int64_t{hour} * 3600 + int64_t{minute} * 60 + second;
}

std::vector<GriddedVariable> temperatures_first(std::vector<GriddedVariable> variables) {
  std::stable_partition(variables.begin(), variables.end(),
                        [](const GriddedVariable& v) { return is_temperature_unit(v.units); });
  return variables;
}

std::string describe_variable(const GriddedVariable& variable) {
  std::string about = variable.long_name;
  if (!variable.units.empty()) about += (about.empty() ? "" : ", ") + variable.units;
  return variable.name + (about.empty() ? "" : " (" + about + ")");
}

std::string describe_variable_choice(const GriddedField& field) {
  if (!field.variable_chosen) return {};
  std::string others;
  for (const auto& v : temperatures_first(field.file_variables)) {
    if (v.name == field.variable) continue;
    others += (others.empty() ? "" : ", ") + v.name + (v.units.empty() ? "" : " [" + v.units + "]");
  }
  // The unit the file states: a task holds the values converted to kelvin (field.units).
  GriddedVariable read{field.variable, field.long_name, field.units};
  for (const auto& v : field.file_variables)
    if (v.name == field.variable) read.units = v.units;
  return field.source.filename().string() + " holds " +
         std::to_string(field.file_variables.size()) + " gridded variables: read " +
         describe_variable(read) + ", the first in a temperature unit; the others: " + others;
}

int64_t GriddedField::time_index(const std::string& utc) const {
  if (utc.empty()) return 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0;
  char separator = 0;
  if (std::sscanf(utc.c_str(), "%d-%d-%d%c%d:%d", &year, &month, &day, &separator, &hour,
                  &minute) != 6 ||
      (separator != 'T' && separator != ' ')) {
    throw DataError("time '" + utc + "': expected YYYY-MM-DDTHH:MM (UTC)");
  }
  const auto wanted = utc_seconds(year, month, day, hour, minute);
  for (size_t i = 0; i < valid_times.size(); ++i) {
    if (valid_times[i] == wanted) return static_cast<int64_t>(i);
  }
  throw DataError(source.string() + " has no time " + format_utc(wanted) +
                  (valid_times.empty() ? std::string(" (it has none)")
                                       : " (it has " + std::to_string(valid_times.size()) +
                                             ", from " + format_utc(valid_times.front()) + ")"));
}

std::string format_utc(int64_t s) {
  int64_t days = s >= 0 ? s / 86400 : -((-s + 86399) / 86400);
  int64_t rem = s - days * 86400;
  // civil_from_days (H. Hinnant).
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  char text[64];
  std::snprintf(text, sizeof text, "%04lld-%02u-%02u %02lld:%02lld UTC", static_cast<long long>(y),
                m, d, static_cast<long long>(rem / 3600), static_cast<long long>(rem % 3600 / 60));
  return text;
}

const std::vector<std::unique_ptr<GriddedReader>>& gridded_readers() {
  static const auto readers = [] {
    std::vector<std::unique_ptr<GriddedReader>> list;
    list.push_back(readers::make_netcdf_reader());
    list.push_back(readers::make_grib_reader());
    return list;
  }();
  return readers;
}

std::vector<std::string> gridded_suffixes() {
  std::vector<std::string> all;
  for (const auto& reader : gridded_readers()) {
    for (const auto& suffix : reader->suffixes()) all.push_back(suffix);
  }
  return all;
}

GriddedField read_gridded_field(const std::filesystem::path& path,
                                const GriddedReadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    readers::fail(path, "no such file (or not a regular file)");
  }
  std::ifstream in(path, std::ios::binary);
  std::string magic(8, '\0');
  in.read(magic.data(), static_cast<std::streamsize>(magic.size()));
  magic.resize(static_cast<size_t>(in.gcount()));
  if (magic.empty()) readers::fail(path, "the file is empty");
  std::string known;
  for (const auto& reader : gridded_readers()) {
    if (reader->recognises(magic)) return reader->read(path, options);
    known += (known.empty() ? "" : ", ") + reader->format_name();
  }
  readers::fail(path, "not a recognised gridded-data file (known formats: " + known + ")");
}

}  // namespace npe
