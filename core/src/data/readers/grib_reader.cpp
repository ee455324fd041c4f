// GRIB editions 1 and 2 through ecCodes: one message per valid time on a regular_ll grid, as
// the Climate Data Store delivers ERA5.

#include <eccodes.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <vector>

#include "data/grib_message_walk.h"
#include "data/readers/raw_field.h"
#include "data/readers/readers.h"
#include "npe/data/temperature_unit.h"

namespace npe::readers {
namespace {

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
struct HandleDeleter {
  void operator()(codes_handle* h) const { codes_handle_delete(h); }
};
using Handle = std::unique_ptr<codes_handle, HandleDeleter>;

class Message {
 public:
  Message(codes_handle* h, const std::filesystem::path& path, int index)
      : m_handle(h), m_path(path), m_index(index) {}

  [[noreturn]] void fail_key(const char* key, int err) const {
    fail(m_path, "message " + std::to_string(m_index) + ": cannot read key '" + key + "' (" +
                     codes_get_error_message(err) + ")");
  }
  std::string text(const char* key) const {
    char buffer[256] = {};
    size_t length = sizeof buffer;
    if (int err = codes_get_string(m_handle.get(), key, buffer, &length)) fail_key(key, err);
    return buffer;
  }
  std::string text_or_empty(const char* key) const {
    char buffer[256] = {};
    size_t length = sizeof buffer;
    return codes_get_string(m_handle.get(), key, buffer, &length) == 0 ? buffer : "";
  }
  long integer(const char* key) const {
    long value = 0;
    if (int err = codes_get_long(m_handle.get(), key, &value)) fail_key(key, err);
    return value;
  }
  double number(const char* key) const {
    double value = 0;
    if (int err = codes_get_double(m_handle.get(), key, &value)) fail_key(key, err);
    return value;
  }
  /// The message's values, which must be `expected` many: the count ecCodes reports comes from
  /// the message's own (possibly corrupt) sections, so it is checked before anything is
  /// allocated for it.
  std::vector<double> values(size_t expected) const {
    size_t count = 0;
    if (int err = codes_get_size(m_handle.get(), "values", &count)) fail_key("values", err);
    if (count != expected)
      problem("has " + std::to_string(count) + " values for a grid of " + std::to_string(expected) +
              " points");
    std::vector<double> out(count);
    if (int err = codes_get_double_array(m_handle.get(), "values", out.data(), &count))
      fail_key("values", err);
    if (count != expected)
      problem("decoded " + std::to_string(count) + " values for a grid of " +
              std::to_string(expected) + " points");
    return out;
  }
  [[noreturn]] void problem(const std::string& what) const {
    fail(m_path, "message " + std::to_string(m_index) + ": " + what);
  }

 private:
  Handle m_handle;
  std::filesystem::path m_path;
  int m_index;
};

// The regular latitude/longitude grid of a message.
struct Grid {
  long ni = 0, nj = 0;
  std::vector<double> latitudes, longitudes;
  bool operator==(const Grid& o) const {
    return ni == o.ni && nj == o.nj && latitudes == o.latitudes && longitudes == o.longitudes;
  }
};

Grid grid_of(const Message& m) {
  const auto type = m.text("gridType");
  if (type != "regular_ll") {
    m.problem("unsupported grid type '" + type + "' (only regular_ll latitude/longitude grids)");
  }
  Grid g;
  g.ni = m.integer("Ni");
  g.nj = m.integer("Nj");
  // Each side is bounded before the product: Ni × Nj of a corrupt message overflowed a long
  // (found by fuzz_gridded_field once it saw the child's coverage).
  constexpr long kMaxPoints = 1L << 28;
  if (g.ni < 1 || g.nj < 1 || g.ni > kMaxPoints || g.nj > kMaxPoints / g.ni)
    m.problem("implausible grid size (" + std::to_string(g.ni) + " x " + std::to_string(g.nj) +
              " points)");
  if (m.integer("jPointsAreConsecutive") != 0) m.problem("column-major point order is unsupported");
  const double lat0 = m.number("latitudeOfFirstGridPointInDegrees");
  const double lon0 = m.number("longitudeOfFirstGridPointInDegrees");
  const double dj = g.nj > 1 ? m.number("jDirectionIncrementInDegrees") : 0.0;
  const double di = g.ni > 1 ? m.number("iDirectionIncrementInDegrees") : 0.0;
  const double jsign = m.integer("jScansPositively") ? 1.0 : -1.0;
  const double isign = m.integer("iScansNegatively") ? -1.0 : 1.0;
  // Degrees are stored in millidegrees (GRIB 1) or microdegrees (GRIB 2): round away the
  // binary noise of the multiplication.
  auto tidy = [](double v) { return std::round(v * 1e6) / 1e6; };
  for (long j = 0; j < g.nj; ++j) g.latitudes.push_back(tidy(lat0 + jsign * dj * j));
  for (long i = 0; i < g.ni; ++i) g.longitudes.push_back(tidy(lon0 + isign * di * i));
  return g;
}

/// ecCodes trusts the lengths in a message's header (grib_message_walk.h): the file is walked
/// first, and a message it could not read safely refuses the whole file.
void check_messages(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open the file");
  if (const auto problem = grib_message_problem(in, std::filesystem::file_size(path)))
    fail(path, *problem);
}

// ecCodes parses its definition files (hundreds of small text files: templates, and the
// concept tables behind shortName, name and units) the first time a context needs each one,
// and keeps them in the context. A child forked from a process that never parsed them parses
// them again for every file it reads. Reading the same keys once from ecCodes' own samples
// here, in the parent, hands every child the parsed definitions: reading ecCodes' GRIB 2 sample
// in the fuzz build went from 295 to 16 ms (GRIB 1: 205 to 27 ms). Nothing here comes from the
// user's file.
void parse_definitions_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* sample : {"regular_ll_sfc_grib1", "regular_ll_sfc_grib2"}) {
      Handle h(codes_grib_handle_new_from_samples(nullptr, sample));
      if (!h) continue;  // samples not installed: the children parse the definitions
      char text[256];
      for (const char* key : {"shortName", "cfVarName", "name", "units"}) {
        size_t length = sizeof text;
        codes_get_string(h.get(), key, text, &length);
      }
      long number = 0;
      for (const char* key : {"Ni", "Nj", "bitmapPresent", "validityDate", "validityTime"})
        codes_get_long(h.get(), key, &number);
      size_t values = 0;
      codes_get_size(h.get(), "values", &values);
    }
  });
}

class GribReader final : public GriddedReader {
 public:
  std::string format_name() const override { return "GRIB"; }
  std::vector<std::string> suffixes() const override {
    return {"grib", "grb", "grib1", "grib2", "grb2"};
  }
  bool recognises(const std::string& magic) const override { return magic.rfind("GRIB", 0) == 0; }

  GriddedField read(const std::filesystem::path& path,
                    const GriddedReadOptions& options) const override {
    // ecCodes crashes on some corrupt messages (a division by zero in its GRIB 1 step units,
    // found by fuzz_gridded_field): it runs in a child process.
    if (options.time_invariant) {
      fail(path, "time-invariant fields (elevation, land-sea mask) are read from NetCDF files");
    }
    parse_definitions_once();
    // The child chooses among variables by unit: read UDUNITS's database here, once, so that
    // every child inherits it instead of parsing it again.
    is_temperature_unit("K");
    return to_field(
        read_in_child(path, options, "ecCodes",
                      [&](ChildChannel& channel) { return read_raw(path, options, channel); }),
        path);
  }

 private:
  static RawField read_raw(const std::filesystem::path& path, const GriddedReadOptions& options,
                           ChildChannel& channel) {
    check_messages(path);
    std::unique_ptr<FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
    if (!file) fail(path, "cannot open the file");
    RawField field;
    Grid grid;
    int64_t messages = 0;
    bool chosen_is_temperature = false;
    std::vector<bool> temperature;  // of each entry of field.file_variables
    for (int index = 1;; ++index) {
      channel.progress();
      int err = 0;
      codes_handle* h = codes_handle_new_from_file(nullptr, file.get(), PRODUCT_GRIB, &err);
      if (!h) {
        if (err == CODES_SUCCESS) break;  // end of file
        fail(path, "message " + std::to_string(index) + " is corrupt or truncated (" +
                       codes_get_error_message(err) + ")");
      }
      Message m(h, path, index);
      const auto short_name = m.text("shortName");
      const auto cf_name = m.text_or_empty("cfVarName");
      // Each variable's entry, and whether it is a temperature, once (UDUNITS parses).
      auto known = std::find_if(field.file_variables.begin(), field.file_variables.end(),
                                [&](const GriddedVariable& v) { return v.name == short_name; });
      const auto entry = static_cast<size_t>(known - field.file_variables.begin());
      if (known == field.file_variables.end()) {
        field.file_variables.push_back(
            {short_name, m.text_or_empty("name"), m.text_or_empty("units")});
        temperature.push_back(is_temperature_unit(field.file_variables.back().units));
      }
      const auto& about = field.file_variables[entry];
      if (!options.variable.empty()) {
        if (options.variable != short_name && options.variable != cf_name) continue;
      } else if (field.variable.empty()) {
        chosen_is_temperature = temperature[entry];
      } else if (short_name != field.variable) {
        // Several variables: the first in a temperature unit is read. Values of a variable
        // taken before one in a temperature unit appeared are dropped.
        if (chosen_is_temperature || !temperature[entry]) continue;
        chosen_is_temperature = true;
        field.variable.clear();
        field.values.clear();
        field.valid_times.clear();
        messages = 0;
      }
      if (field.variable.empty()) {
        field.variable = short_name;
        field.long_name = about.long_name;
        field.units = about.units;
      }
      auto g = grid_of(m);
      if (messages == 0) {
        grid = g;
      } else if (!(g == grid)) {
        m.problem("its grid differs from the first message's");
      }
      const auto points = static_cast<int64_t>(grid.ni * grid.nj);
      if (points * (messages + 1) > options.max_values)
        m.problem("the field would hold more than " + std::to_string(options.max_values) +
                  " values: too large to load");
      auto values = m.values(static_cast<size_t>(points));
      if (m.integer("bitmapPresent")) {
        const double missing = m.number("missingValue");
        for (double& v : values) {
          if (v == missing) v = std::nan("");
        }
      }
      const long date = m.integer("validityDate"), time = m.integer("validityTime");
      field.valid_times.push_back(
          utc_seconds(static_cast<int>(date / 10000), static_cast<int>(date / 100 % 100),
                      static_cast<int>(date % 100), static_cast<int>(time / 100),
                      static_cast<int>(time % 100)));
      field.values.insert(field.values.end(), values.begin(), values.end());
      ++messages;
    }
    if (messages == 0) {
      fail(path, options.variable.empty() ? "no GRIB messages"
                                          : "no message with variable '" + options.variable + "'");
    }
    if (options.variable.empty() && field.file_variables.size() > 1) {
      if (!chosen_is_temperature) {
        std::string names;
        for (const auto& v : field.file_variables)
          names += (names.empty() ? "" : ", ") + v.name + " [" + v.units + "]";
        fail(path, "none of its " + std::to_string(field.file_variables.size()) +
                       " variables is in a temperature unit (" + names +
                       "): NP Explorer's models predict temperatures");
      }
      field.variable_chosen = true;
    }
    field.shape = {messages, grid.nj, grid.ni};
    field.axes = {0, 1, 2};
    field.latitudes = grid.latitudes;
    field.longitudes = grid.longitudes;
    return field;
  }
};

}  // namespace

std::unique_ptr<GriddedReader> make_grib_reader() {
  return std::make_unique<GribReader>();
}

}  // namespace npe::readers
