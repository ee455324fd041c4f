#include "point_columns.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <torch/torch.h>

#include "npe/errors.h"
#include "option_values.h"

namespace npe::cli {

std::vector<int> variable_columns(const PointTable& table, const std::string& stem,
                                  const std::string& chosen, const std::string& file,
                                  bool required) {
  std::vector<int> columns;
  if (!chosen.empty()) {
    for (const auto& name : parse_list(chosen)) {
      const int index = table.column_index(name);
      if (index < 0 && !required) return {};
      if (index < 0) throw DataError(file + ": no column named '" + name + "'");
      columns.push_back(index);
    }
    return columns;
  }
  if (const int index = table.column_index(stem); index >= 0) return {index};
  for (int d = 1;; ++d) {
    const int index = table.column_index(stem + std::to_string(d));
    if (index < 0) break;
    columns.push_back(index);
  }
  return columns;
}

torch::Tensor gather(const PointTable& table, const std::vector<int>& columns,
                     std::vector<bool>& finite) {
  const auto n = static_cast<int64_t>(table.rows.size());
  auto out = torch::empty({n, static_cast<int64_t>(columns.size())}, torch::kFloat64);
  auto a = out.accessor<double, 2>();
  finite.assign(static_cast<size_t>(n), true);
  for (int64_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < columns.size(); ++j) {
      const double v = table.rows[static_cast<size_t>(i)][static_cast<size_t>(columns[j])];
      a[i][static_cast<int64_t>(j)] = v;
      if (!std::isfinite(v)) finite[static_cast<size_t>(i)] = false;
    }
  }
  return out;
}

torch::Tensor rows_where(const torch::Tensor& values, const std::vector<bool>& keep) {
  std::vector<int64_t> index;
  for (size_t i = 0; i < keep.size(); ++i) {
    if (keep[i]) index.push_back(static_cast<int64_t>(i));
  }
  return values.index_select(0, torch::tensor(index, torch::kInt64));
}

int column_named(const PointTable& table, const std::string& file,
                 std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const int index = table.column_index(name); index >= 0) return index;
  }
  throw DataError(file + ": no column named " + *names.begin());
}

void report_warnings(const char* command, const PointTable& table, const std::string& file) {
  const size_t shown = std::min<size_t>(table.warnings.size(), 5);
  for (size_t i = 0; i < shown; ++i) {
    std::fprintf(stderr, "%s: %s: %s (row skipped)\n", command, file.c_str(),
                 table.warnings[i].c_str());
  }
  if (table.warnings.size() > shown) {
    std::fprintf(stderr, "%s: %s: %zu more rows skipped\n", command, file.c_str(),
                 table.warnings.size() - shown);
  }
}

}  // namespace npe::cli
