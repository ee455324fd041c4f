#pragma once
// The user's own series: a delimited text file (CSV, TSV, semicolons or whitespace) with a
// header line, an x column of numbers or date-times, one or more y columns and, optionally, a
// column naming the series each row belongs to (many series in one file). What the `series`
// task family (series_tasks.h) trains on and what the 1-D tab shows.

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace npe {

/// Which columns to read, by header name (case-insensitive). Empty: the defaults.
struct SeriesColumns {
  std::string x;               ///< empty: the first column
  std::vector<std::string> y;  ///< empty: every other column holding a number on the first row
  std::string id;              ///< empty: one series (no id column)
  /// Read `id` only when the file has that column (a model's files of points may have it).
  bool id_if_present = false;
  /// A file of places to predict: x alone suffices; the y columns are read when the file has
  /// every one of them (to score the predictions), and a missing y keeps its row (as NaN).
  bool inputs_only = false;
};

/// One series: rows in increasing x.
struct Series {
  std::string id;         ///< the id column's value, or the file's name without an id column
  std::vector<double> x;  ///< numbers as in the file, or hours since SeriesData::time_origin
  std::vector<float> y;   ///< row-major [x.size(), D_y], in the file's units
  int64_t size() const { return static_cast<int64_t>(x.size()); }
};

struct SeriesData {
  std::filesystem::path path;
  std::string x_name;
  /// x was date-times: x values are hours since time_origin (seconds since 1970, UTC).
  bool x_is_time = false;
  double time_origin = std::numeric_limits<double>::quiet_NaN();
  std::string time_form;  ///< how the file writes them ("YYYY-MM-DD HH:MM:SS")
  std::vector<std::string> y_names;
  std::string id_name;  ///< empty: one series
  std::vector<Series> series;
  int64_t rows_read = 0;     ///< data rows kept
  int64_t rows_missing = 0;  ///< rows skipped for a missing x or y (empty, NA, NaN)
  /// The median step between consecutive x of a series (ties left out), in x units.
  double spacing = std::numeric_limits<double>::quiet_NaN();
  /// Things the reader did that the user should know ("rows were not in x order: sorted").
  std::vector<std::string> notes;

  int64_t dim_y() const { return static_cast<int64_t>(y_names.size()); }
  /// "hours" for date-times, else "" (the file's own unit, unknown here).
  std::string x_unit() const { return x_is_time ? "hours" : ""; }
  /// x in the file's terms: the date-time for date-times ("2016-07-01 05:00"), else the number.
  std::string describe_x(double x) const;
  /// One paragraph: series and rows, x and its spacing, the y columns, what was skipped.
  std::string describe() const;
};

/// Reads a series file. Throws DataError naming the file and, where one is at fault, the line:
/// a missing file, no header or data, a named column that is not there, an x that is neither a
/// number nor a date-time, date-times in several forms, a y that is not a number, infinities,
/// a row with another number of fields than the header. Missing values (empty, NA, NaN, null)
/// skip their row, counted in rows_missing. A UTF-8 byte-order mark and quoted fields are read.
SeriesData read_series_file(const std::filesystem::path& path, const SeriesColumns& columns = {});

}  // namespace npe
