// NetCDF (classic and NetCDF-4) through libnetcdf, following the CF conventions that ERA5 files
// use: packed integers with scale_factor/add_offset, _FillValue/missing_value, "<unit> since
// <date>" time coordinates, latitude in either direction.

#include <netcdf.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>

#include <torch/torch.h>

#include "data/child_process.h"
#include "data/netcdf_access.h"
#include "data/readers/raw_field.h"
#include "data/readers/readers.h"
#include "npe/data/temperature_unit.h"

namespace npe::readers {
namespace {

// a * b, or the largest value where that would wrap: a NetCDF-4 file of 8 KB may declare
// dimensions of 2^40 and 2^24 (HDF5 stores no data for them), whose wrapped product, 0, passed
// the value limit, after which 2^40 time values were read (fuzz_gridded_field's kind of input).
uintmax_t saturating_product(uintmax_t a, uintmax_t b) {
  if (a != 0 && b > std::numeric_limits<uintmax_t>::max() / a)
    return std::numeric_limits<uintmax_t>::max();
  return a * b;
}
uintmax_t saturating_sum(uintmax_t a, uintmax_t b) {
  return b > std::numeric_limits<uintmax_t>::max() - a ? std::numeric_limits<uintmax_t>::max()
                                                       : a + b;
}

class NetcdfFile {
 public:
  /// `channel`: where a read in a child process reports progress (nullptr in the process
  /// itself).
  NetcdfFile(const std::filesystem::path& path, ChildChannel* channel)
      : m_path(path), m_channel(channel) {
    if (const auto error = open_netcdf(path, &m_id); !error.empty())
      fail(m_path, "cannot open as NetCDF (" + error + ")");
    progress();
  }
  ~NetcdfFile() { nc_close(m_id); }
  NetcdfFile(const NetcdfFile&) = delete;
  NetcdfFile& operator=(const NetcdfFile&) = delete;

  int id() const { return m_id; }
  void check(int status, const std::string& what) const {
    if (status != NC_NOERR) fail(m_path, what + " (" + nc_strerror(status) + ")");
    progress();
  }
  void progress() const {
    if (m_channel) m_channel->progress();
  }

  std::string text_attribute(int var, const char* name) const {
    nc_type type;
    size_t length = 0;
    if (nc_inq_att(m_id, var, name, &type, &length) != NC_NOERR || type != NC_CHAR) return {};
    std::string value(length, '\0');
    check(nc_get_att_text(m_id, var, name, value.data()), std::string("attribute ") + name);
    while (!value.empty() && value.back() == '\0') value.pop_back();
    return value;
  }
  std::optional<double> number_attribute(int var, const char* name) const {
    nc_type type;
    size_t length = 0;
    if (nc_inq_att(m_id, var, name, &type, &length) != NC_NOERR || length < 1 || type == NC_CHAR ||
        type == NC_STRING) {
      return std::nullopt;
    }
    std::vector<double> values(length);
    check(nc_get_att_double(m_id, var, name, values.data()), std::string("attribute ") + name);
    return values[0];
  }
  std::string variable_name(int var) const {
    char name[NC_MAX_NAME + 1] = {};
    check(nc_inq_varname(m_id, var, name), "variable name");
    return name;
  }
  std::vector<int> variable_dimensions(int var) const {
    int ndims = 0;
    check(nc_inq_varndims(m_id, var, &ndims), "variable dimensions");
    std::vector<int> dims(static_cast<size_t>(ndims));
    if (ndims > 0) check(nc_inq_vardimid(m_id, var, dims.data()), "variable dimensions");
    return dims;
  }
  size_t dimension_length(int dim) const {
    size_t length = 0;
    check(nc_inq_dimlen(m_id, dim, &length), "dimension length");
    return length;
  }
  std::string dimension_name(int dim) const {
    char name[NC_MAX_NAME + 1] = {};
    check(nc_inq_dimname(m_id, dim, name), "dimension name");
    return name;
  }
  /// Every value of a variable. The buffer is sized from the variable's own dimensions, not from
  /// the dimension the caller expects: libnetcdf writes the whole variable, and a latitude
  /// declared on the longitude dimension overflowed a buffer sized for the latitudes (found by
  /// reading; the fuzzer cannot see writes made inside uninstrumented libnetcdf).
  std::vector<double> read_variable(int var) const {
    uintmax_t count = 1;
    for (int dim : variable_dimensions(var))
      count = saturating_product(count, dimension_length(dim));
    if (count > std::vector<double>().max_size()) fail(m_path, "a variable is too large to read");
    std::vector<double> values(static_cast<size_t>(count));
    if (count > 0) check(nc_get_var_double(m_id, var, values.data()), "cannot read values");
    return values;
  }
  /// A variable of the given dimension lengths, read in slabs along its first dimension so that
  /// progress is reported between them (a large field is one long libnetcdf call otherwise).
  std::vector<double> read_doubles_in_slabs(int var, const std::vector<size_t>& lengths) const {
    size_t count = 1;
    for (size_t length : lengths) count *= length;
    if (lengths.empty() || count == 0) return read_variable(var);
    const size_t per_index = count / lengths[0];
    constexpr size_t kValuesPerSlab = size_t{1} << 23;  // 64 MB of doubles
    const size_t step = std::max<size_t>(1, kValuesPerSlab / per_index);
    std::vector<double> values(count);
    std::vector<size_t> start(lengths.size(), 0), extent = lengths;
    for (size_t first = 0; first < lengths[0]; first += step) {
      start[0] = first;
      extent[0] = std::min(step, lengths[0] - first);
      check(nc_get_vara_double(m_id, var, start.data(), extent.data(),
                               values.data() + first * per_index),
            "cannot read values");
    }
    return values;
  }

 private:
  std::filesystem::path m_path;
  ChildChannel* m_channel = nullptr;
  int m_id = -1;
};

enum class Axis { Time, Latitude, Longitude, Other };

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// What a coordinate variable (or a dimension without one) stands for, by CF attributes first
// and by the usual names second.
Axis axis_of(const NetcdfFile& file, int dim) {
  const auto name = lower(file.dimension_name(dim));
  int var = -1;
  if (nc_inq_varid(file.id(), name.c_str(), &var) == NC_NOERR ||
      nc_inq_varid(file.id(), file.dimension_name(dim).c_str(), &var) == NC_NOERR) {
    const auto standard = lower(file.text_attribute(var, "standard_name"));
    const auto units = lower(file.text_attribute(var, "units"));
    if (standard == "latitude" || units == "degrees_north" || units == "degree_north")
      return Axis::Latitude;
    if (standard == "longitude" || units == "degrees_east" || units == "degree_east")
      return Axis::Longitude;
    if (standard == "time" || units.find(" since ") != std::string::npos) return Axis::Time;
    // CF's axis attribute names the axis of coordinates with other names and units.
    const auto axis = lower(file.text_attribute(var, "axis"));
    if (axis == "y" && units.rfind("degree", 0) == 0) return Axis::Latitude;
    if (axis == "x" && units.rfind("degree", 0) == 0) return Axis::Longitude;
  }
  if (name == "latitude" || name == "lat") return Axis::Latitude;
  if (name == "longitude" || name == "lon") return Axis::Longitude;
  if (name == "time" || name == "valid_time") return Axis::Time;
  return Axis::Other;
}

// Times are int64 seconds from 1970. Bounding the reference year and each value's distance from
// it keeps their sum far inside that range (a corrupt file's 1e300 hours would overflow it) while
// allowing any calendar date a dataset means.
constexpr int kMaxYears = 100'000;  // of the reference from year 0, of a value from the reference
constexpr double kMaxSecondsFromReference = kMaxYears * 365.2425 * 86'400;

// "hours since 1900-01-01 00:00:00.0" -> seconds per unit and the reference time.
std::pair<double, int64_t> parse_time_units(const std::string& units,
                                            const std::filesystem::path& path) {
  const auto since = units.find(" since ");
  if (since == std::string::npos)
    fail(path, "time units '" + units + "' are not '<unit> since <date>'");
  const auto unit = lower(units.substr(0, since));
  static const std::map<std::string, double> seconds = {
      {"seconds", 1.0}, {"second", 1.0},   {"s", 1.0},        {"minutes", 60.0},
      {"minute", 60.0}, {"min", 60.0},     {"hours", 3600.0}, {"hour", 3600.0},
      {"h", 3600.0},    {"days", 86400.0}, {"day", 86400.0},  {"d", 86400.0}};
  auto found = seconds.find(unit);
  if (found == seconds.end()) fail(path, "unsupported time unit '" + unit + "'");
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double s = 0.0;
  const auto date = units.substr(since + 7);
  const int parsed = std::sscanf(date.c_str(), "%d-%d-%d%*[ T]%d:%d:%lf", &y, &mo, &d, &h, &mi, &s);
  // The seconds become an int: a value out of its range would be undefined behaviour.
  if (parsed < 3 || std::abs(y) > kMaxYears || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
      h > 24 || mi < 0 || mi > 59 || !(s >= 0.0 && s < 61.0)) {
    fail(path, "cannot read the reference date of time units '" + units + "'");
  }
  return {found->second, utc_seconds(y, mo, d, h, mi, static_cast<int>(s))};
}

class NetcdfReader final : public GriddedReader {
 public:
  std::string format_name() const override { return "NetCDF"; }
  std::vector<std::string> suffixes() const override { return {"nc", "nc4", "netcdf", "cdf"}; }
  bool recognises(const std::string& magic) const override {
    return magic.rfind("CDF\x01", 0) == 0 || magic.rfind("CDF\x02", 0) == 0 ||
           magic.rfind("CDF\x05", 0) == 0 || magic.rfind("\x89HDF", 0) == 0;
  }

  GriddedField read(const std::filesystem::path& path,
                    const GriddedReadOptions& options) const override {
    const auto one_read_at_a_time = lock_netcdf();
    if (!is_hdf5(path)) return to_field(read_raw(path, options, nullptr), path);
    // The child chooses among variables by unit: read UDUNITS's database here, once, so that
    // every child inherits it instead of parsing it again.
    is_temperature_unit("K");
    // NetCDF-4 is HDF5, which hangs on some corrupt files: read it in a child process.
    return to_field(
        read_in_child(path, options, "libnetcdf/HDF5",
                      [&](ChildChannel& channel) { return read_raw(path, options, &channel); }),
        path);
  }

 private:
  static bool is_hdf5(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::string magic(4, '\0');
    in.read(magic.data(), 4);
    return in && magic == "\x89HDF";
  }

  static RawField read_raw(const std::filesystem::path& path, const GriddedReadOptions& options,
                           ChildChannel* channel) {
    NetcdfFile file(path, channel);
    check_not_truncated(file, path);
    RawField raw;
    const int var = find_variable(file, options, path, raw);
    const auto dims = file.variable_dimensions(var);

    raw.variable = file.variable_name(var);
    raw.units = file.text_attribute(var, "units");
    raw.long_name = file.text_attribute(var, "long_name");

    // Position of each axis among the variable's dimensions; other dimensions must be size 1.
    std::map<Axis, int64_t> position;
    std::vector<size_t> lengths;
    uintmax_t count = 1;
    for (int dim : dims) {
      const auto axis = axis_of(file, dim);
      const auto length = file.dimension_length(dim);
      lengths.push_back(length);
      count = saturating_product(count, length);
      if (axis == Axis::Other) {
        if (length != 1) {
          fail(path, "variable '" + raw.variable + "' has an extra dimension '" +
                         file.dimension_name(dim) + "' of length " + std::to_string(length));
        }
        continue;
      }
      if (position.count(axis)) fail(path, "variable '" + raw.variable + "' repeats an axis");
      // An empty axis would make the count 0 and let the others' coordinates be of any length.
      if (length == 0) {
        fail(path, "variable '" + raw.variable + "' has an empty dimension '" +
                       file.dimension_name(dim) + "'");
      }
      position[axis] = static_cast<int64_t>(raw.shape.size());
      raw.shape.push_back(static_cast<int64_t>(length));
    }
    // A time-invariant field (elevation, land-sea mask) is read, when asked for, as one time
    // slice: a trailing dimension of length 1 keeps the stored order of the values.
    const bool invariant = options.time_invariant && position.size() == 2 &&
                           position.count(Axis::Latitude) && position.count(Axis::Longitude);
    if (invariant) {
      position[Axis::Time] = static_cast<int64_t>(raw.shape.size());
      raw.shape.push_back(1);
    }
    if (position.size() != 3 || (options.time_invariant && !invariant)) {
      fail(path,
           "variable '" + raw.variable + "' is not on " +
               (options.time_invariant ? "(latitude, longitude)" : "(time, latitude, longitude)"));
    }
    if (count > static_cast<uintmax_t>(std::max<int64_t>(options.max_values, 0))) {
      const auto held = count == std::numeric_limits<uintmax_t>::max()
                            ? std::string("more than 2^64")
                            : std::to_string(count);
      fail(path, "the field holds " + held + " values, more than " +
                     std::to_string(options.max_values) + ": too large to load");
    }
    raw.axes = {position[Axis::Time], position[Axis::Latitude], position[Axis::Longitude]};
    auto dim_of = [&](Axis axis) {
      for (int dim : dims)
        if (axis_of(file, dim) == axis) return dim;
      return -1;
    };

    if (!invariant) raw.valid_times = read_times(file, dim_of(Axis::Time), path);
    raw.latitudes = read_coordinate(file, dim_of(Axis::Latitude), path);
    raw.longitudes = read_coordinate(file, dim_of(Axis::Longitude), path);

    raw.values = file.read_doubles_in_slabs(var, lengths);
    // Missing values are flagged on the stored (packed) numbers, before unpacking.
    const auto fill = file.number_attribute(var, "_FillValue");
    const auto missing = file.number_attribute(var, "missing_value");
    const double scale = file.number_attribute(var, "scale_factor").value_or(1.0);
    const double offset = file.number_attribute(var, "add_offset").value_or(0.0);
    for (double& v : raw.values) {
      if ((fill && v == *fill) || (missing && v == *missing) || !std::isfinite(v) ||
          std::abs(v) >= 9.9e36) {  // NetCDF's default fill for float and double
        v = std::nan("");
      } else {
        v = v * scale + offset;
      }
    }
    return raw;
  }

  // The variable to read: the one named, else the only gridded one, else the first gridded one
  // in a temperature unit (files of forcing data or climatologies hold several: temperature,
  // humidity, wind...). Every gridded variable goes into raw.file_variables.
  static int find_variable(const NetcdfFile& file, const GriddedReadOptions& options,
                           const std::filesystem::path& path, RawField& raw) {
    int nvars = 0;
    file.check(nc_inq_nvars(file.id(), &nvars), "cannot list variables");
    std::vector<int> candidates;
    int named = -1;
    for (int v = 0; v < nvars; ++v) {
      const auto name = file.variable_name(v);
      if (!options.variable.empty() && name == options.variable) named = v;
      int axes = 0;
      for (int d : file.variable_dimensions(v)) axes += axis_of(file, d) != Axis::Other;
      if (axes != 3) continue;
      candidates.push_back(v);
      raw.file_variables.push_back(
          {name, file.text_attribute(v, "long_name"), file.text_attribute(v, "units")});
    }
    if (!options.variable.empty()) {
      if (named >= 0) return named;
      std::string names;
      for (int v = 0; v < nvars; ++v) names += (names.empty() ? "" : ", ") + file.variable_name(v);
      fail(path, "no variable '" + options.variable + "' (variables: " + names + ")");
    }
    if (candidates.empty()) fail(path, "no variable on (time, latitude, longitude)");
    if (candidates.size() == 1) return candidates.front();
    std::string names;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (is_temperature_unit(raw.file_variables[i].units)) {
        raw.variable_chosen = true;
        return candidates[i];
      }
      const auto& units = raw.file_variables[i].units;
      names += (names.empty() ? "" : ", ") + raw.file_variables[i].name +
               (units.empty() ? " (no unit)" : " [" + units + "]");
    }
    fail(path, "none of its " + std::to_string(candidates.size()) +
                   " gridded variables is in a temperature unit (" + names +
                   "): NP Explorer's models predict temperatures");
  }

  // libnetcdf reads the missing end of a truncated classic-format file as zeros, which
  // unpack to plausible temperatures. Every variable's data must fit in the file: a truncated
  // file fails that test unless the cut is inside the last few hundred bytes of header size.
  static void check_not_truncated(const NetcdfFile& file, const std::filesystem::path& path) {
    int format = 0;
    file.check(nc_inq_format(file.id(), &format), "cannot read the format");
    if (format != NC_FORMAT_CLASSIC && format != NC_FORMAT_64BIT_OFFSET &&
        format != NC_FORMAT_64BIT_DATA) {
      return;  // NetCDF-4 files are HDF5, which checks its own structure
    }
    int nvars = 0;
    file.check(nc_inq_nvars(file.id(), &nvars), "cannot list variables");
    uintmax_t needed = 0;
    for (int v = 0; v < nvars; ++v) {
      nc_type type;
      file.check(nc_inq_vartype(file.id(), v, &type), "variable type");
      size_t type_size = 0;
      file.check(nc_inq_type(file.id(), type, nullptr, &type_size), "variable type");
      uintmax_t bytes = type_size;
      for (int d : file.variable_dimensions(v))
        bytes = saturating_product(bytes, file.dimension_length(d));
      // Variables are padded to 4 bytes. A sum past 2^64 is more than any file holds.
      needed = saturating_sum(needed, saturating_sum(bytes, 3) / 4 * 4);
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size < needed) {
      fail(path, "the file is truncated: " + std::to_string(size) + " bytes hold less than the " +
                     std::to_string(needed) + " bytes its variables need");
    }
  }

  /// The CF coordinate variable of a dimension: the variable of the dimension's name, on that
  /// dimension alone. -1 if there is none.
  static int coordinate_variable(const NetcdfFile& file, int dim,
                                 const std::filesystem::path& path) {
    int var = -1;
    const auto name = file.dimension_name(dim);
    if (nc_inq_varid(file.id(), name.c_str(), &var) != NC_NOERR) return -1;
    if (file.variable_dimensions(var) != std::vector<int>{dim}) {
      fail(path, "coordinate variable '" + name + "' is not on the dimension '" + name + "' alone");
    }
    return var;
  }

  static std::vector<double> read_coordinate(const NetcdfFile& file, int dim,
                                             const std::filesystem::path& path) {
    const int var = coordinate_variable(file, dim, path);
    if (var < 0) fail(path, "coordinate variable '" + file.dimension_name(dim) + "' is missing");
    auto values = file.read_variable(var);
    const double scale = file.number_attribute(var, "scale_factor").value_or(1.0);
    const double offset = file.number_attribute(var, "add_offset").value_or(0.0);
    for (double& v : values) v = v * scale + offset;
    return values;
  }

  static std::vector<int64_t> read_times(const NetcdfFile& file, int dim,
                                         const std::filesystem::path& path) {
    const int var = coordinate_variable(file, dim, path);
    if (var < 0) fail(path, "the time coordinate variable is missing");
    const auto calendar = lower(file.text_attribute(var, "calendar"));
    if (!calendar.empty() && calendar != "standard" && calendar != "gregorian" &&
        calendar != "proleptic_gregorian") {
      fail(path, "unsupported calendar '" + calendar + "'");
    }
    const auto [unit, reference] = parse_time_units(file.text_attribute(var, "units"), path);
    std::vector<int64_t> times;
    for (double t : file.read_variable(var)) {
      if (!std::isfinite(t)) fail(path, "a time value is not finite");
      const double seconds = t * unit;
      if (std::abs(seconds) > kMaxSecondsFromReference)
        fail(path, "a time value lies more than " + std::to_string(kMaxYears) +
                       " years from the reference date");
      times.push_back(reference + static_cast<int64_t>(std::llround(seconds)));
    }
    return times;
  }
};

}  // namespace

std::unique_ptr<GriddedReader> make_netcdf_reader() {
  return std::make_unique<NetcdfReader>();
}

}  // namespace npe::readers
