#pragma once
// A model file named on the command line (--checkpoint, --model FILE): a checkpoint, or a
// TorchScript model, whose description (what npe.json did not say and was assumed) goes to
// stderr so that the user sees it before any figure.

#include <filesystem>
#include <memory>

#include <torch/types.h>

#include "npe/predictors/predictor.h"

namespace npe::cli {

std::unique_ptr<Predictor> load_model_file(const std::filesystem::path& path, torch::Device device);

/// The name a table row or summary line gives the predictor: its registry name, or for a
/// TorchScript model (which has none of its own) its display name.
std::string row_name(const Predictor& predictor);

}  // namespace npe::cli
