#pragma once
// A model file named on the command line (--checkpoint, --model FILE): a checkpoint, or a
// TorchScript model, whose description (what npe.json did not say and was assumed) goes to
// stderr so that the user sees it before any figure.

#include <filesystem>
#include <memory>

#include <torch/types.h>

#include "npe/data/era5_tasks.h"
#include "npe/predictors/predictor.h"

namespace npe::cli {

/// The ERA5 task a checkpoint was trained on (its statistics, inputs and window), for the
/// commands that read a grid. Throws DataError for a model of another task or one whose task
/// lacks its standardisation or coordinate origin.
Era5TaskConfig era5_task_of_model(const std::filesystem::path& checkpoint);

std::unique_ptr<Predictor> load_model_file(const std::filesystem::path& path, torch::Device device);

/// The name a table row or summary line gives the predictor: its registry name, or for a
/// TorchScript model (which has none of its own) its display name.
std::string row_name(const Predictor& predictor);

}  // namespace npe::cli
