// The user's own 1-D data: delimited text files imported as context points.

#include <cstddef>
#include <cstdint>

#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static npe::fuzz::ScratchFile file(".csv");
  try {
    const auto table = npe::read_point_table(file.write(data, size));
    const auto [x, y] = npe::default_xy_columns(table);
    int64_t nan_rows = 0;
    if (x >= 0) (void)table.points(x, y, &nan_rows);
    (void)table.column_index("x");
  } catch (const npe::DataError&) {
  }
  return 0;
}
