#include "npe/data/point_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "npe/atomic_file.h"
#include "npe/errors.h"

namespace npe {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The delimiter of a line: the first of tab, comma, semicolon it contains; else whitespace.
char detect_delimiter(const std::string& line) {
  for (char d : {'\t', ',', ';'}) {
    if (line.find(d) != std::string::npos) return d;
  }
  return ' ';
}

std::vector<std::string> split(const std::string& line, char delimiter) {
  std::vector<std::string> fields;
  if (delimiter == ' ') {
    std::istringstream in(line);
    std::string field;
    while (in >> field) fields.push_back(field);
    return fields;
  }
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, delimiter)) fields.push_back(trim(field));
  if (!line.empty() && line.back() == delimiter) fields.emplace_back();
  return fields;
}

// A whole field as a number ("nan" included); false for anything else.
bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

int PointTable::column_index(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (lower(columns[i]) == lower(name)) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::pair<double, double>> PointTable::points(int x_column, int y_column,
                                                          int64_t* nan_rows) const {
  const auto width = static_cast<int>(columns.size());
  if (x_column < 0 || y_column < 0 || x_column >= width || y_column >= width) {
    throw DataError("column out of range (the table has " + std::to_string(width) + ")");
  }
  std::vector<std::pair<double, double>> out;
  int64_t skipped = 0;
  for (const auto& row : rows) {
    const double x = row[static_cast<size_t>(x_column)], y = row[static_cast<size_t>(y_column)];
    if (std::isnan(x) || std::isnan(y)) {
      ++skipped;
    } else {
      out.emplace_back(x, y);
    }
  }
  if (nan_rows) *nan_rows = skipped;
  return out;
}

PointTable read_point_table(const std::filesystem::path& path, size_t min_columns) {
  std::ifstream in(path);
  if (!in) throw DataError("cannot open '" + path.string() + "'");
  PointTable table;
  std::string line;
  int64_t line_number = 0;
  char delimiter = 0;
  size_t width = 0;
  bool first_content = true;
  while (std::getline(in, line)) {
    ++line_number;
    const auto content = trim(line);
    if (content.empty() || content[0] == '#') continue;
    if (!delimiter) delimiter = detect_delimiter(content);
    auto fields = split(content, delimiter);
    std::vector<double> values(fields.size());
    bool numeric = true;
    for (size_t i = 0; i < fields.size() && numeric; ++i)
      numeric = parse_number(fields[i], values[i]);
    if (first_content) {
      first_content = false;
      width = fields.size();
      if (width < min_columns) {
        throw DataError("'" + path.string() + "' line " + std::to_string(line_number) +
                        (min_columns == 2 ? ": needs at least two columns (x and y), found "
                                          : ": needs at least " + std::to_string(min_columns) +
                                                " columns, found ") +
                        std::to_string(width));
      }
      if (!numeric) {
        table.columns = fields;  // a header
        continue;
      }
      for (size_t i = 0; i < width; ++i) table.columns.push_back("column " + std::to_string(i + 1));
    }
    const auto where = "line " + std::to_string(line_number) + ": ";
    if (fields.size() != width) {
      table.warnings.push_back(where + std::to_string(fields.size()) + " fields, expected " +
                               std::to_string(width));
      continue;
    }
    if (!numeric) {
      table.warnings.push_back(where + "not a number in '" + content + "'");
      continue;
    }
    if (std::any_of(values.begin(), values.end(), [](double v) { return std::isinf(v); })) {
      table.warnings.push_back(where + "infinite value");
      continue;
    }
    table.rows.push_back(std::move(values));
  }
  if (in.bad()) throw DataError("cannot read '" + path.string() + "'");
  if (table.rows.empty()) {
    std::string detail = table.warnings.empty() ? "" : " (" + table.warnings.front() + ")";
    throw DataError("'" + path.string() + "' has no rows of numbers" + detail);
  }
  return table;
}

std::pair<int, int> default_xy_columns(const PointTable& table) {
  if (table.columns.size() < 2) return {-1, -1};
  const int x = table.column_index("x"), y = table.column_index("y");
  if (x >= 0 && y >= 0 && x != y) return {x, y};
  return {0, 1};
}

void write_point_table(const std::filesystem::path& path, const PointTable& table,
                       const std::vector<std::string>& first_column_labels) {
  if (!first_column_labels.empty() && first_column_labels.size() != table.rows.size()) {
    throw DataError("cannot write '" + path.string() +
                    "': " + std::to_string(first_column_labels.size()) + " labels for " +
                    std::to_string(table.rows.size()) + " rows");
  }
  std::string text;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    text += (c ? "," : "") + table.columns[c];
  }
  text += "\n";
  char number[32];
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    if (row.size() != table.columns.size()) {
      throw DataError("cannot write '" + path.string() + "': row " + std::to_string(r + 1) +
                      " has " + std::to_string(row.size()) + " values for " +
                      std::to_string(table.columns.size()) + " columns");
    }
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) text += ',';
      if (c == 0 && !first_column_labels.empty()) {
        text += first_column_labels[r];
      } else if (std::isnan(row[c])) {
        text += "nan";
      } else {
        std::snprintf(number, sizeof number, "%.9g", row[c]);
        text += number;
      }
    }
    text += '\n';
  }
  try {
    write_file_atomically(path, text);
  } catch (const Error& e) {
    throw DataError(e.what());
  }
}

}  // namespace npe
