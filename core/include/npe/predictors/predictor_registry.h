#pragma once
// Name -> factory registry of predictors: the GP baselines and every neural model kind.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "npe/data/gp_tasks.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/gp.h"
#include "npe/predictors/gp_bayes.h"
#include "npe/predictors/predictor.h"

namespace npe {

/// How to build a predictor. Neural kinds load `checkpoint`, or, with `untrained`, are built
/// fresh at `size` for `task` (for timing); baselines use `fitted`.
struct PredictorOptions {
  std::filesystem::path checkpoint;
  bool untrained = false;
  std::string size = "small";
  /// Task the untrained model is sized for (D_x, D_y, task presets); gp1d when null.
  const TaskSource* task = nullptr;
  torch::Device device = torch::kCPU;
  /// Fitted GP baselines: iterations and learning rate (ard is set by the registry).
  FittedGpOptions fitted;
  /// GP baselines (oracle and fitted): largest context they accept, 0 = no limit. Their cost
  /// grows as Nc^3, so interactive tools set a cap and report instead of appearing frozen.
  int64_t gp_max_context = 0;
  /// The prior the tasks were drawn from, for the Bayes-optimal GP (gp-bayes): the paper's 1-D
  /// tasks unless a tool knows better (npe takes it from a gp1d task's options).
  GpTaskConfig gp_prior;
  /// Quadrature of gp-bayes over the prior's scale.
  GpBayesOptions gp_bayes;
};

/// Every registered predictor: baselines first, then the neural kinds in display order.
const std::vector<PredictorInfo>& predictor_infos();
/// Throws ConfigError listing the known names.
const PredictorInfo& predictor_info(const std::string& name);

/// Builds the named predictor. Throws ConfigError (unknown name, neural kind without a
/// checkpoint, a checkpoint of another kind) or CheckpointError.
std::unique_ptr<Predictor> make_predictor(const std::string& name,
                                          const PredictorOptions& options = {});
/// The predictor of a model file the user chose: a checkpoint, whatever its kind, or a
/// TorchScript model (torchscript_predictor.h; told by content, never by suffix), which runs
/// its code. Throws CheckpointError.
std::unique_ptr<Predictor> load_predictor(const std::filesystem::path& checkpoint,
                                          torch::Device device = torch::kCPU);
/// The metadata of a model file the user chose, as read_checkpoint_metadata gives a
/// checkpoint's; a TorchScript model's describes its dimensions and task (loading it, which
/// runs its code). Throws CheckpointError.
CheckpointMetadata read_model_metadata(const std::filesystem::path& path);
/// Wraps a model in memory (e.g. one being trained) as a predictor running on `device`.
std::unique_ptr<Predictor> wrap_model(std::shared_ptr<NeuralProcessImpl> model,
                                      torch::Device device = torch::kCPU);

}  // namespace npe
