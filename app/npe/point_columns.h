#pragma once
// Columns of the point tables the commands read (npe predict, npe place): which columns hold a
// variable, and their rows as tensors.

#include <initializer_list>
#include <string>
#include <vector>

#include <torch/types.h>

#include "npe/data/point_table.h"

namespace npe::cli {

/// The columns holding a variable: the names given (comma-separated), else a column named
/// `stem` ("x"), else `stem`1, `stem`2, ... for as long as they exist. Empty when there is none
/// (or, when not `required`, when a chosen name is missing). Throws DataError for a chosen name
/// that is missing where it is required.
std::vector<int> variable_columns(const PointTable& table, const std::string& stem,
                                  const std::string& chosen, const std::string& file,
                                  bool required = true);

/// The index of the first of `names` the table has. Throws DataError naming the first when it
/// has none.
int column_named(const PointTable& table, const std::string& file,
                 std::initializer_list<const char*> names);

/// Rows of `columns` as a [N, D] float64 tensor, and which rows are all finite.
torch::Tensor gather(const PointTable& table, const std::vector<int>& columns,
                     std::vector<bool>& finite);

/// The rows of `values` where `keep` is true.
torch::Tensor rows_where(const torch::Tensor& values, const std::vector<bool>& keep);

/// The reader's warnings (rows skipped), the first five and a count, to stderr.
void report_warnings(const char* command, const PointTable& table, const std::string& file);

}  // namespace npe::cli
