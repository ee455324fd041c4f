// Whole checkpoint files (a zip archive written by libtorch): load_checkpoint must refuse
// anything corrupt with a CheckpointError, and telling a TorchScript program from a checkpoint
// (is_torchscript_model, which only reads the zip directory and code records) must neither
// crash nor compile anything, whatever the bytes.

#include <cstddef>
#include <cstdint>

#include <c10/util/Logging.h>
#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/torchscript_predictor.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  torch::set_num_threads(1);
  // libtorch symbolises a stack trace into every c10::Error it throws (backtrace_symbols, a
  // dladdr per frame): 27 % of the time on corrupt archives, for text that load_checkpoint
  // drops (it keeps what_without_backtrace). The messages themselves are unchanged.
  c10::SetStackTraceFetcher([] { return std::string(); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static npe::fuzz::ScratchFile file(".pt");
  const auto& path = file.write(data, size);
  (void)npe::is_torchscript_model(path);
  try {
    npe::load_checkpoint(path);
  } catch (const npe::CheckpointError&) {
  }
  return 0;
}
