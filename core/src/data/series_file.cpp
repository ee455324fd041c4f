#include "npe/data/series_file.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <string_view>

#include "npe/data/date_time.h"
#include "npe/errors.h"

namespace npe {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// A field without its spaces and quotes: spreadsheets and pandas write "2016-07-01 00:00:00".
std::string_view unquote(std::string_view text) {
  text = trim(text);
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = trim(text.substr(1, text.size() - 2));
  }
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The delimiter of the header line: the first of tab, comma, semicolon it contains; else runs
// of whitespace.
char detect_delimiter(std::string_view line) {
  for (char d : {'\t', ',', ';'}) {
    if (line.find(d) != std::string_view::npos) return d;
  }
  return ' ';
}

void split(std::string_view line, char delimiter, std::vector<std::string_view>& fields) {
  fields.clear();
  if (delimiter == ' ') {
    size_t at = 0;
    while (at < line.size()) {
      while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
      if (at == line.size()) break;
      const auto begin = at;
      while (at < line.size() && !std::isspace(static_cast<unsigned char>(line[at]))) ++at;
      fields.push_back(unquote(line.substr(begin, at - begin)));
    }
    return;
  }
  size_t begin = 0;
  for (;;) {
    const auto end = line.find(delimiter, begin);
    fields.push_back(
        unquote(line.substr(begin, end == std::string_view::npos ? end : end - begin)));
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
}

bool is_missing(std::string_view field) {
  if (field.empty()) return true;
  const auto l = lower(field);
  return l == "na" || l == "n/a" || l == "nan" || l == "null" || l == "none" || l == "-" ||
         l == "?" || l == "#n/a";
}

// A whole field as a finite or infinite number ("+1.5", "1e3", "inf"); false for anything else.
bool parse_number(std::string_view field, double& value) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  if (field.empty()) return false;
  const auto* end = field.data() + field.size();
  const auto result = std::from_chars(field.data(), end, value);
  return result.ec == std::errc() && result.ptr == end;
}

int find_column(const std::vector<std::string>& names, const std::string& wanted) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (lower(names[i]) == lower(wanted)) return static_cast<int>(i);
  }
  return -1;
}

std::string list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace

std::string SeriesData::describe_x(double x) const {
  if (x_is_time) return format_date_time(time_origin + x * 3600.0);
  return format_number(x);
}

std::string SeriesData::describe() const {
  std::string text = std::to_string(series.size()) + " series";
  if (!id_name.empty()) text += " (by '" + id_name + "')";
  text += ", " + std::to_string(rows_read) + " rows";
  if (rows_missing > 0) {
    text += " (" + std::to_string(rows_missing) + " rows with a missing value skipped)";
  }
  text += "; x: '" + x_name + "'";
  if (x_is_time) {
    text += ", date-times (" + time_form + ") read as hours since " + format_date_time(time_origin);
  }
  if (std::isfinite(spacing)) {
    text += ", spacing " + format_number(spacing) + (x_is_time ? " h" : "");
  }
  text += "; y: " + list(y_names);
  for (const auto& note : notes) text += "; " + note;
  return text;
}

SeriesData read_series_file(const std::filesystem::path& path, const SeriesColumns& columns) {
  const auto name = "'" + path.string() + "'";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("cannot open " + name);
  if (std::filesystem::is_directory(path)) throw DataError(name + " is a folder, not a file");
  SeriesData data;
  data.path = path;
  std::string line;
  int64_t line_number = 0;
  char delimiter = 0;
  std::vector<std::string> header;
  std::vector<std::string_view> fields;
  // Header: the first line that is neither empty nor a '#' comment.
  while (std::getline(in, line)) {
    ++line_number;
    std::string_view content(line);
    if (line_number == 1 && content.substr(0, 3) == "\xEF\xBB\xBF") content.remove_prefix(3);
    content = trim(content);
    if (content.empty() || content.front() == '#') continue;
    delimiter = detect_delimiter(content);
    split(content, delimiter, fields);
    for (auto f : fields) header.emplace_back(f);
    break;
  }
  if (header.empty()) throw DataError(name + " is empty: a header line and rows are needed");
  if (header.size() < 2 && !columns.inputs_only) {
    throw DataError(name + " line " + std::to_string(line_number) +
                    ": one column only; a series needs an x column and a y column (a header "
                    "such as 'date,temperature', fields separated by commas, tabs, semicolons "
                    "or spaces)");
  }
  const auto header_line = line_number;
  const auto column = [&](const std::string& wanted, const char* role) {
    const int i = find_column(header, wanted);
    if (i < 0) {
      throw DataError(name + " has no column '" + wanted + "' for " + role +
                      " (its columns: " + list(header) + ")");
    }
    return i;
  };
  const int x_col = columns.x.empty() ? 0 : column(columns.x, "x");
  const bool id_wanted =
      !columns.id.empty() && !(columns.id_if_present && find_column(header, columns.id) < 0);
  const int id_col = id_wanted ? column(columns.id, "the series id") : -1;
  if (id_col == x_col) throw DataError(name + ": the x column cannot also be the series id");
  std::vector<int> y_cols;
  const bool has_every_y =
      std::all_of(columns.y.begin(), columns.y.end(),
                  [&](const std::string& y) { return find_column(header, y) >= 0; });
  for (const auto& y :
       columns.inputs_only && !has_every_y ? std::vector<std::string>{} : columns.y) {
    const int i = column(y, "y");
    if (i == x_col || i == id_col) {
      throw DataError(name + ": column '" + y + "' cannot be both y and x or the series id");
    }
    y_cols.push_back(i);
  }
  data.x_name = header[static_cast<size_t>(x_col)];
  if (id_col >= 0) data.id_name = header[static_cast<size_t>(id_col)];

  std::map<std::string, size_t, std::less<>> series_of_id;
  bool columns_known = false;  // the y columns and a time column, from the first data row
  bool x_kind_known = false;   // numbers or date-times, from the first row whose x is present
  int time_col = -1;           // a time-of-day column beside a date-only x column
  std::string joined;          // a whitespace file's date and time, rejoined
  std::string x_text;
  std::vector<double> y_values;
  while (std::getline(in, line)) {
    ++line_number;
    const auto content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    const auto where = name + " line " + std::to_string(line_number);
    split(content, delimiter, fields);
    // Whitespace-separated files split "2016-07-01 00:00" in two: join them back.
    if (delimiter == ' ' && fields.size() == header.size() + 1 && x_col == 0) {
      joined = std::string(fields[0]) + " " + std::string(fields[1]);
      if (parse_date_time(joined)) {
        fields.erase(fields.begin());
        fields[0] = joined;
      }
    }
    if (fields.size() != header.size()) {
      throw DataError(where + ": " + std::to_string(fields.size()) + " fields, the header (line " +
                      std::to_string(header_line) + ") has " + std::to_string(header.size()));
    }
    if (!columns_known) {
      // The first data row decides, by default, which columns are y; a date without a time
      // followed by a time of day ("2016-07-01,00:00") is one x.
      double v = 0.0;
      const auto x_field = std::string(fields[static_cast<size_t>(x_col)]);
      const auto date = parse_date_time(x_field);
      const int next = x_col + 1;
      if (date && date->form.find('h') == std::string::npos &&
          next < static_cast<int>(header.size()) && next != id_col &&
          parse_date_time(x_field + " " + std::string(fields[static_cast<size_t>(next)]))) {
        time_col = next;
        data.notes.push_back("the time of day is read from column '" +
                             header[static_cast<size_t>(time_col)] + "'");
      }
      if (y_cols.empty() && !columns.inputs_only) {
        for (size_t i = 0; i < header.size(); ++i) {
          const int c = static_cast<int>(i);
          if (c == x_col || c == id_col || c == time_col) continue;
          if (parse_number(fields[i], v) || is_missing(fields[i])) y_cols.push_back(c);
        }
        if (y_cols.empty()) {
          throw DataError(where + ": no column besides x holds a number (columns: " + list(header) +
                          ")");
        }
      }
      for (int c : y_cols) data.y_names.push_back(header[static_cast<size_t>(c)]);
      columns_known = true;
    }
    // x
    x_text = std::string(fields[static_cast<size_t>(x_col)]);
    bool missing = is_missing(x_text);
    if (time_col >= 0 && !missing) {
      const auto time = fields[static_cast<size_t>(time_col)];
      missing = is_missing(time);
      x_text += " " + std::string(time);
    }
    if (!missing && !x_kind_known) {
      // The first row with an x decides what x is.
      double v = 0.0;
      if (const auto t = parse_date_time(x_text)) {
        data.x_is_time = true;
        data.time_origin = t->seconds;
        data.time_form = t->form;
      } else if (!parse_number(x_text, v)) {
        throw DataError(where + ": x ('" + data.x_name + "') is '" + x_text +
                        "': neither a number nor a date-time (forms such as 2010-01-01, "
                        "2010-01-01 00:00:00, 2010/01/01 00:00, 2010-01-01T00:00Z)");
      }
      x_kind_known = true;
    }
    double x = 0.0;
    if (!missing) {
      if (data.x_is_time) {
        const auto t = parse_date_time(x_text);
        if (!t) {
          throw DataError(where + ": '" + x_text + "' is not a date-time like " +
                          "the first row's (" + data.time_form + ")");
        }
        // The date's layout must stay the same (a file that changes it may have merged sources
        // that write dates differently); the time may gain or lose seconds or a fraction, as
        // Python's isoformat() and R write them.
        if (t->form.substr(0, 10) != data.time_form.substr(0, 10)) {
          throw DataError(where + ": the date-time '" + x_text + "' is written " + t->form +
                          ", the first row's " + data.time_form + " (mixed forms)");
        }
        x = (t->seconds - data.time_origin) / 3600.0;
      } else if (!parse_number(x_text, x)) {
        throw DataError(where + ": x ('" + data.x_name + "') is '" + x_text +
                        "', not a number like the first row's");
      } else if (std::isnan(x)) {
        missing = true;
      } else if (std::isinf(x)) {
        throw DataError(where + ": x is infinite");
      }
    }
    // y
    y_values.resize(y_cols.size());
    for (size_t k = 0; k < y_cols.size() && !missing; ++k) {
      const auto field = fields[static_cast<size_t>(y_cols[k])];
      if (is_missing(field)) {
        y_values[k] = std::nan("");
        missing = !columns.inputs_only;
      } else if (!parse_number(field, y_values[k])) {
        throw DataError(where + ": '" + data.y_names[k] + "' is '" + std::string(field) +
                        "', not a number");
      } else if (std::isinf(y_values[k])) {
        throw DataError(where + ": '" + data.y_names[k] + "' is infinite");
      } else if (std::isnan(y_values[k])) {
        missing = !columns.inputs_only;
      } else if (std::abs(y_values[k]) > 3e38) {
        throw DataError(where + ": '" + data.y_names[k] + "' is " + std::string(field) +
                        ", beyond single precision");
      }
    }
    if (missing) {
      ++data.rows_missing;
      continue;
    }
    const std::string_view id =
        id_col >= 0 ? fields[static_cast<size_t>(id_col)] : std::string_view();
    auto found = series_of_id.find(id);
    if (found == series_of_id.end()) {
      found = series_of_id.emplace(std::string(id), data.series.size()).first;
      Series s;
      s.id = id_col >= 0 ? std::string(id) : path.stem().string();
      data.series.push_back(std::move(s));
    }
    auto& s = data.series[found->second];
    s.x.push_back(x);
    for (double v : y_values) s.y.push_back(static_cast<float>(v));
    ++data.rows_read;
  }
  if (in.bad()) throw DataError("cannot read " + name);
  if (!columns_known || data.rows_read == 0) {
    throw DataError(name + " has no data row with every value present (" +
                    std::to_string(data.rows_missing) + " rows with a missing value)");
  }
  // Rows in x order within each series; files written by hand or merged are not always.
  const auto dim_y = static_cast<size_t>(data.dim_y());
  int64_t unsorted = 0;
  std::vector<double> steps;
  for (auto& s : data.series) {
    if (!std::is_sorted(s.x.begin(), s.x.end())) {
      ++unsorted;
      std::vector<size_t> order(s.x.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return s.x[a] < s.x[b]; });
      std::vector<double> x(s.x.size());
      std::vector<float> y(s.y.size());
      for (size_t i = 0; i < order.size(); ++i) {
        x[i] = s.x[order[i]];
        std::copy_n(s.y.begin() + static_cast<std::ptrdiff_t>(order[i] * dim_y), dim_y,
                    y.begin() + static_cast<std::ptrdiff_t>(i * dim_y));
      }
      s.x = std::move(x);
      s.y = std::move(y);
    }
    for (size_t i = 1; i < s.x.size(); ++i) {
      if (s.x[i] > s.x[i - 1]) steps.push_back(s.x[i] - s.x[i - 1]);
    }
  }
  if (unsorted > 0) {
    data.notes.push_back(std::to_string(unsorted) +
                         " of the series had rows out of x order: " + "sorted by x");
  }
  if (!steps.empty()) {
    auto middle = steps.begin() + static_cast<std::ptrdiff_t>((steps.size() - 1) / 2);
    std::nth_element(steps.begin(), middle, steps.end());
    data.spacing = *middle;
  }
  return data;
}

}  // namespace npe
