#pragma once
// The user's own point data as delimited text files (CSV, TSV or whitespace-separated): read as
// context points for the explorer and `npe predict`, written for predictions going out.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace npe {

/// A numeric table read from a delimited text file.
struct PointTable {
  /// Column names from the header line, or "column 1", "column 2", ... without one.
  std::vector<std::string> columns;
  /// rows[i][j]: value of column j in data row i (NaN where the file has NaN).
  std::vector<std::vector<double>> rows;
  /// Problems that did not stop the reading, with line numbers ("line 7: 3 fields, expected 2").
  std::vector<std::string> warnings;

  /// Index of the column named `name` (case-insensitive), or -1.
  int column_index(const std::string& name) const;
  /// The (x, y) pairs of two columns, leaving out rows where either is NaN; their number goes
  /// to `nan_rows` when given. Throws DataError for a column index out of range.
  std::vector<std::pair<double, double>> points(int x_column, int y_column,
                                                int64_t* nan_rows = nullptr) const;
};

/// Reads a delimited file: the delimiter (comma, tab, semicolon or whitespace) is detected from
/// the first data line; a first line that is not numeric is a header; empty lines and lines
/// starting with '#' are skipped. Rows whose field count differs or that hold non-numbers are
/// skipped with a warning naming the line; NaN values are kept (points() skips them). Throws
/// DataError when the file cannot be read, has fewer than `min_columns` columns (two: x and y;
/// one for files of inputs only), or has no numeric row.
PointTable read_point_table(const std::filesystem::path& path, size_t min_columns = 2);

/// Writes `table` as CSV: the column names, then one line per row, numbers with 9 significant
/// digits (float32 values exactly) and NaN as "nan"; read_point_table reads it back. Atomic:
/// nothing is written when it fails. Throws DataError for a row whose length differs from the
/// columns' (nothing written) or a file that cannot be written.
/// `first_column_labels`, when given (one per row), are written in place of the first column's
/// numbers: date-times in the user's terms.
void write_point_table(const std::filesystem::path& path, const PointTable& table,
                       const std::vector<std::string>& first_column_labels = {});

/// The two columns to use as (x, y): columns named "x" and "y" when the header has them, else
/// the first two. Returns {-1, -1} when the table has fewer than two columns.
std::pair<int, int> default_xy_columns(const PointTable& table);

}  // namespace npe
