// Gridded fields (ERA5): the NetCDF and GRIB readers, chosen by the file's first bytes as the
// programs choose them. They run in a reader server (reader_server.h), not a child per input.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include <torch/torch.h>

#include "npe/data/gridded_field.h"
#include "npe/errors.h"
#include "reader_server.h"
#include "scratch_file.h"

namespace {

npe::GriddedReadOptions read_options() {
  npe::GriddedReadOptions options;
  // A constant GRIB field (0 bits per value) may describe millions of points in a few bytes.
  // 2^17 values hold every field of at least 1 bit per value that a 16 KB input can carry;
  // larger constant fields take the refusal path. At the earlier 4 M values, passing tens of MB
  // into tensors was a third of the time of every input that had one (session 19).
  options.max_values = int64_t{1} << 17;
  return options;
}

void read(const std::filesystem::path& path) {
  try {
    const auto field = npe::read_gridded_field(path, read_options());
    (void)field.latitude_step();
    (void)field.longitude_step();
  } catch (const npe::DataError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static npe::fuzz::ScratchFile file(".field");
  // A server that answers nothing for this long is stopped, as the program's stall limit stops
  // a child. Replaying a corpus, the slowest read took 97 ms; what goes quiet is HDF5 reading
  // some corrupt global heaps (H5HG_read), where AddressSanitizer checks the shadow of a memcpy
  // whose length comes from the file before the copy would fault. Those inputs ran to whatever
  // limit there was: at 10 s they took half of a profile, and at 0.5 s still half (session 19).
  static npe::fuzz::ReaderServer server([] { read(file.path()); }, std::chrono::milliseconds(200));
  static const bool warmed_up = [] {
    // ecCodes parses its definition files on first use (~0.3 s in this build): once here, so
    // that every server forked from this process starts with them (grib_reader.cpp).
    read("/usr/share/eccodes/samples/regular_ll_sfc_grib2.tmpl");
    return true;
  }();
  (void)warmed_up;
  file.write(data, size);
  server.run();
  return 0;
}
