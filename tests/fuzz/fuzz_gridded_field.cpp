// Gridded fields (ERA5): the NetCDF and GRIB readers, chosen by the file's first bytes as the
// programs choose them.

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <torch/torch.h>

#include "npe/data/gridded_field.h"
#include "npe/errors.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static npe::fuzz::ScratchFile file(".field");
  // A NetCDF-4 read stuck in HDF5 is stopped well inside libFuzzer's 30 s timeout.
  npe::GriddedReadOptions options;
  options.stall_limit = std::chrono::seconds(10);
  // A constant GRIB field (0 bits per value) may describe millions of points in a few bytes;
  // fields above 4 M values (32 MB as doubles) stay below the fuzzer's memory limit.
  options.max_values = int64_t{1} << 22;
  try {
    const auto field = npe::read_gridded_field(file.write(data, size), options);
    (void)field.latitude_step();
    (void)field.longitude_step();
  } catch (const npe::DataError&) {
  }
  return 0;
}
