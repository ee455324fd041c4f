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
  npe::GriddedReadOptions options;
  // A child that reports no progress for this long is stopped ("no progress for 0.5 s"), the
  // program's own path for a stuck library. The readers report progress every 50 ms while they
  // work; what goes quiet is HDF5 reading some corrupt global heaps (H5HG_read), where
  // AddressSanitizer checks the shadow of a memcpy whose length comes from the file before the
  // copy would fault (session 19: those inputs ran into the earlier 10 s limit and took half of
  // the run's time).
  options.stall_limit = std::chrono::milliseconds(500);
  // A constant GRIB field (0 bits per value) may describe millions of points in a few bytes.
  // 2^17 values hold every field of at least 1 bit per value that a 16 KB input can carry;
  // larger constant fields take the refusal path. At the earlier 4 M values, passing tens of MB
  // through the child's pipe into tensors was a third of the time of every input that had one.
  options.max_values = int64_t{1} << 17;
  try {
    const auto field = npe::read_gridded_field(file.write(data, size), options);
    (void)field.latitude_step();
    (void)field.longitude_step();
  } catch (const npe::DataError&) {
  }
  return 0;
}
