#pragma once
// The GP baselines' options, shared by the commands that run them (eval, predict): which
// baseline (--model) and its settings, turned into PredictorOptions.

#include <optional>
#include <string>

#include <torch/types.h>
#include <CLI/CLI.hpp>

#include "npe/predictors/gp_bayes.h"
#include "npe/predictors/predictor_registry.h"

namespace npe {
class TaskSource;
}

namespace npe::cli {

struct BaselineArguments {
  std::optional<std::string> model;
  int fit_iterations = FittedGpOptions{}.iterations;
  int64_t bayes_grid = GpBayesOptions{}.grid_points;
  int64_t bayes_periodic_grid = GpBayesOptions{}.periodic_grid_points;
  int bayes_refinements = GpBayesOptions{}.max_refinements;
};

/// --model (excluding `checkpoint`), --fit-iterations and gp-bayes's grid options.
void add_baseline_options(CLI::App& command, BaselineArguments& baseline, CLI::Option* checkpoint);

/// The options of the named baseline on `device`. A baseline that averages over a GP prior
/// (gp-bayes) takes `prior_source`'s; throws UsageError when it has none, or when the name is a
/// neural model (those come from a checkpoint).
PredictorOptions baseline_predictor_options(const BaselineArguments& baseline, torch::Device device,
                                            const TaskSource& prior_source);

/// The predictor of a command on points (predict, place): the model file of --checkpoint (a
/// checkpoint or a TorchScript model) or the --model baseline (gp-bayes with the gp1d prior),
/// with the file's D_x and D_y (-1 for a baseline, which takes any). Throws UsageError for
/// neither or both, and for a baseline that needs the generating process (gp-oracle).
struct PointPredictor {
  std::unique_ptr<Predictor> predictor;
  int64_t dim_x = -1, dim_y = -1;
};
PointPredictor point_predictor(const std::string& command,
                               const std::optional<std::string>& checkpoint,
                               const BaselineArguments& baseline, torch::Device device);

}  // namespace npe::cli
