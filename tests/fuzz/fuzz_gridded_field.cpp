// Gridded fields (ERA5): the NetCDF and GRIB readers, chosen by the file's first bytes as the
// programs choose them.

#include <cstddef>
#include <cstdint>

#include <torch/torch.h>

#include "npe/data/gridded_field.h"
#include "npe/errors.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static npe::fuzz::ScratchFile file(".field");
  try {
    const auto field = npe::read_gridded_field(file.write(data, size));
    (void)field.latitude_step();
    (void)field.longitude_step();
  } catch (const npe::DataError&) {
  }
  return 0;
}
