#pragma once
// Importing models trained with the TE-TNP authors' PyTorch code (cambridge-mlg/tnp, tetnp).
//
// Their checkpoints are Python pickles (torch.save) that libtorch cannot read; the script
// npe-convert-reference (Python, Debian's python3-torch) rewrites the weights as a TorchScript
// archive holding one Dict[str, Tensor], which read_reference_state_dict() loads. Each
// supported architecture (a registry in reference_import.cpp) recognises its parameter names,
// infers the model's sizes from the shapes and maps every tensor onto this project's modules.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "npe/models/checkpoint.h"

namespace npe {

/// The reference model's weights by their PyTorch names ("encoder.xy_encoder.net.0.weight").
struct ReferenceStateDict {
  std::map<std::string, torch::Tensor> tensors;
  /// File name of the original checkpoint, as the converter recorded it.
  std::string origin;
};

/// Reads an archive written by npe-convert-reference. Throws CheckpointError naming the file
/// when it is missing or corrupt, and, for an unconverted PyTorch pickle (a Lightning .ckpt or
/// a torch.save'd state_dict), one that says how to convert it.
ReferenceStateDict read_reference_state_dict(const std::filesystem::path& path);

/// What the weights do not say.
struct ReferenceImportOptions {
  /// Attention heads of a plain TNP (its weights only show heads x head_dim); TE-TNP's are read
  /// from its attention kernel. 8 as in the reference 1-D configuration.
  int64_t num_heads = 8;
  /// Added to the predictive standard deviation (the reference likelihood's min_noise, 0 by
  /// default there).
  double min_stddev = 0.0;
};

/// Names of the importable architectures of the reference code ("TE-TNP", "TNP").
std::vector<std::string> reference_architecture_names();

/// Builds the project's model from reference weights: the architecture that recognises them,
/// its inferred configuration, and every parameter filled (in eval mode, on the CPU). Metadata
/// records the origin. Throws CheckpointError when no architecture matches, a layer is of a
/// kind the project's model does not have (other MLP depths, location updates, other
/// feed-forward widths), or weights are missing, left over or of the wrong shape.
LoadedCheckpoint import_reference_model(const ReferenceStateDict& state,
                                        const ReferenceImportOptions& options = {});

}  // namespace npe
