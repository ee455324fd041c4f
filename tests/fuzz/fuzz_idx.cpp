// MNIST / Fashion-MNIST IDX files, plain and gzip-compressed (the first input byte chooses).

#include <cstddef>
#include <cstdint>

#include <torch/torch.h>

#include "npe/data/idx.h"
#include "npe/errors.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static npe::fuzz::ScratchFile plain(".idx"), compressed(".idx.gz");
  if (size < 1) return 0;
  auto& file = data[0] & 1 ? compressed : plain;
  try {
    const auto images = npe::read_idx_ubyte(file.write(data + 1, size - 1));
    (void)images.sum();
  } catch (const npe::DataError&) {
  }
  return 0;
}
