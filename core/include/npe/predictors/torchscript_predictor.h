#pragma once
// Neural processes written in PyTorch and saved as TorchScript (torch.jit.script(model).save()):
// opened like this project's checkpoints, predicted through the same Predictor interface.
//
// The contract: forward(xc: [B, Nc, Dx], yc: [B, Nc, Dy], xt: [B, Nt, Dx]) returns
// (mean [B, Nt, Dy], std [B, Nt, Dy]) or, for a joint model, (mean, std, covariance
// [B, Nt*Dy, Nt*Dy], target-major). An optional extra file "npe.json" in the archive
// (torch.jit.save(m, path, _extra_files={"npe.json": ...})) says what the file cannot:
//   name                     display name (default: the file's stem)
//   task                     a registered task's name ("gp1d", "tfmnist", "tfmnist-central",
//                            "era5") or a task configuration as checkpoints store it
//   dim_x, dim_y             input and output dimensions (default: the task's, else probed)
//   dim_features             of the D_x inputs, the last ones that are not coordinates (ERA5)
//   input_scale              inputs are multiplied by it before forward() sees them
//   covariance               forward() returns the third output above
//   translation_equivariant  the author's claim, shown to the user (the tabs measure it)
//
// A TorchScript file is a program: libtorch compiles and runs its code with the user's rights,
// as torch.load does in Python. It is opened only when the user names it; the shipped-model
// folders and the checkpoint loader (load_checkpoint, fuzzed) never run one.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "npe/models/checkpoint.h"
#include "npe/predictors/predictor.h"

namespace npe {

/// Registry-style name of every TorchScript model (PredictorInfo::name, ModelConfig::kind of
/// its metadata): no model kind of the registry has it.
inline constexpr const char* kTorchScriptKind = "torchscript";

/// Whether `path` is a TorchScript program with a forward method, decided from its zip layout
/// and code records without running anything. A checkpoint of this project is not one.
bool is_torchscript_model(const std::filesystem::path& path);

/// What a TorchScript model says about itself (npe.json) and what had to be assumed.
struct TorchScriptModelInfo {
  std::string display_name;
  /// The task configuration (TaskSource::to_json()), as a checkpoint's metadata holds it.
  nlohmann::json task;
  int64_t dim_x = 1;
  int64_t dim_y = 1;
  int64_t dim_features = 0;
  double input_scale = 1.0;
  bool covariance = false;
  bool translation_equivariant = false;
  /// Sentences for the user: what was not in npe.json and how it was decided.
  std::vector<std::string> assumptions;

  /// The checkpoint metadata the tools route by (kind kTorchScriptKind, the dimensions and
  /// the task; no training history).
  CheckpointMetadata metadata() const;
};

/// Loads the program (running its code) on `device` and reads or works out its description:
/// npe.json first; dimensions it does not give come from the task, else from a probe call with
/// D_x = 1..4, D_y = 1..3. Throws CheckpointError naming the file and what was expected
/// (another forward signature, no dimensions that work, a malformed npe.json, a file written by
/// a newer PyTorch than this libtorch reads).
TorchScriptModelInfo read_torchscript_model(const std::filesystem::path& path,
                                            torch::Device device = torch::kCPU);

/// The program as a predictor on `device`. predict() throws ModelError (npe/errors.h) naming the
/// file when forward() throws or returns the wrong shapes, non-finite values or a standard
/// deviation that is not positive. Throws CheckpointError as read_torchscript_model.
std::unique_ptr<Predictor> load_torchscript_predictor(const std::filesystem::path& path,
                                                      torch::Device device = torch::kCPU);

}  // namespace npe
