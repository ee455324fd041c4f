// Whole checkpoint files (a zip archive written by libtorch): load_checkpoint must refuse
// anything corrupt with a CheckpointError.

#include <cstddef>
#include <cstdint>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  torch::set_num_threads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static npe::fuzz::ScratchFile file(".pt");
  try {
    npe::load_checkpoint(file.write(data, size));
  } catch (const npe::CheckpointError&) {
  }
  return 0;
}
