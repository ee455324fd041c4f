#pragma once
// Gridded geophysical fields (ERA5 and the like) and the readers that load them from NetCDF and
// GRIB files. One field type for every format, so tasks and views never see the file format.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

namespace npe {

/// A gridded variable of a file, as the file describes it.
struct GriddedVariable {
  std::string name;       ///< "t2m", "AIRT"
  std::string long_name;  ///< empty when the file gives none
  std::string units;      ///< as in the file ("K", "DEG C")
};

/// One variable on a regular latitude/longitude grid over time.
/// Layout is normalised by every reader: latitude descending (row 0 is the northernmost row, as
/// ERA5 stores it and as a map is drawn), longitude ascending in [-180, 180), times ascending.
struct GriddedField {
  torch::Tensor values;            ///< [T, lat, lon] float32; missing values are NaN
  std::vector<double> latitudes;   ///< degrees north, descending
  std::vector<double> longitudes;  ///< degrees east, ascending, in [-180, 180)
  /// Seconds since 1970-01-01 00:00 UTC, ascending; empty for a time-invariant field
  /// (GriddedReadOptions::time_invariant), which has one time slice.
  std::vector<int64_t> valid_times;
  std::string variable;          ///< name in the file ("t2m", "2t")
  std::string long_name;         ///< description when the file has one
  std::string units;             ///< as in the file ("K")
  std::filesystem::path source;  ///< the file it was read from
  /// Every variable of the file on (time, latitude, longitude), in the file's order; the one
  /// read is among them (or it is a time-invariant field read by name).
  std::vector<GriddedVariable> file_variables;
  /// Whether the reader chose `variable` among several (none was named): the first with a
  /// temperature unit.
  bool variable_chosen = false;

  int64_t num_times() const { return values.size(0); }
  int64_t num_latitudes() const { return values.size(1); }
  int64_t num_longitudes() const { return values.size(2); }
  /// Grid spacing in degrees (latitude, longitude), positive.
  double latitude_step() const;
  double longitude_step() const;
  /// The index of the time given as "YYYY-MM-DDTHH:MM" (UTC; a space for the T also reads), or 0
  /// for an empty string. Throws DataError for another form or a time the field does not have.
  int64_t time_index(const std::string& utc) const;
};

/// "2019-03-01 06:00 UTC".
std::string format_utc(int64_t seconds_since_epoch);
/// Seconds since 1970-01-01 of a proleptic-Gregorian UTC date and time.
int64_t utc_seconds(int year, int month, int day, int hour = 0, int minute = 0, int second = 0);

/// `variables` with those in a temperature unit first, each group in the file's order.
std::vector<GriddedVariable> temperatures_first(std::vector<GriddedVariable> variables);
/// "AIRT (AIR TEMPERATURE, DEG C)".
std::string describe_variable(const GriddedVariable& variable);
/// When the reader chose the variable among several: which it read and why, and the others
/// ("holds 7 gridded variables: read SST (SEA SURFACE TEMPERATURE, DEG C), the first in a
/// temperature unit; the others: ..."); else empty.
std::string describe_variable_choice(const GriddedField& field);

/// What to read. Empty variable: the file's only gridded (time, lat, lon) variable, or the first
/// in a temperature unit among several (GriddedField::variable_chosen).
struct GriddedReadOptions {
  std::string variable;
  /// NetCDF-4 files are read in a child process (HDF5 hangs or crashes on some corrupt files),
  /// which is stopped, and the file refused, when it reports no progress for this long.
  std::chrono::milliseconds stall_limit{30'000};
  /// Fields with more values (times × latitudes × longitudes) are refused before anything is
  /// allocated for them: 2^28 is 1 GiB as float32 (a global 0.25° grid, ten days hourly).
  int64_t max_values = int64_t{1} << 28;
  /// Read a variable on (latitude, longitude) alone, without time (surface elevation, land-sea
  /// mask): the field has one time slice and no valid_times. NetCDF only.
  bool time_invariant = false;
};

/// A file format. Readers throw DataError naming the file and the problem for corrupt,
/// truncated or unsupported files (and never crash on them).
class GriddedReader {
 public:
  virtual ~GriddedReader() = default;
  virtual std::string format_name() const = 0;  ///< "NetCDF", "GRIB"
  /// File name suffixes of the format, lower case without the dot ("nc", "grib2"), for file
  /// dialogs and drag and drop (files are still recognised by their first bytes).
  virtual std::vector<std::string> suffixes() const = 0;
  /// Whether the first bytes of a file (up to 8) mark this format.
  virtual bool recognises(const std::string& magic) const = 0;
  virtual GriddedField read(const std::filesystem::path& path,
                            const GriddedReadOptions& options) const = 0;
};

/// Every registered reader, in the order they are tried.
const std::vector<std::unique_ptr<GriddedReader>>& gridded_readers();
/// Every registered reader's suffixes, in reader order.
std::vector<std::string> gridded_suffixes();
/// Reads a field with the reader that recognises the file's first bytes. Throws DataError for
/// missing files, unknown formats and everything a reader rejects.
GriddedField read_gridded_field(const std::filesystem::path& path,
                                const GriddedReadOptions& options = {});

}  // namespace npe
