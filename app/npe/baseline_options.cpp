#include "baseline_options.h"

#include "commands.h"
#include "model_file.h"
#include "npe/data/gp_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/data/task_source.h"
#include "npe/predictors/predictor_registry.h"
#include "option_values.h"

namespace npe::cli {

void add_baseline_options(CLI::App& command, BaselineArguments& baseline, CLI::Option* checkpoint) {
  command
      .add_option("--model", baseline.model,
                  "GP baseline: gp-oracle, gp-bayes, gp-fitted, gp-se-ard")
      ->excludes(checkpoint);
  command
      .add_option("--bayes-grid", baseline.bayes_grid,
                  "gp-bayes: starting cells per kernel family over the scale prior (SE, Matérn)")
      ->check(CLI::Range(int64_t{1}, int64_t{65536}))
      ->capture_default_str();
  command
      .add_option("--bayes-periodic-grid", baseline.bayes_periodic_grid,
                  "gp-bayes: starting cells over the periodic family's period prior")
      ->check(CLI::Range(int64_t{1}, int64_t{65536}))
      ->capture_default_str();
  command
      .add_option("--bayes-refinements", baseline.bayes_refinements,
                  "gp-bayes: rounds of halving the cells that hold posterior mass (0: the fixed "
                  "grid alone)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  command.add_option("--fit-iterations", baseline.fit_iterations, "Adam iterations of fitted GPs")
      ->check(at_least(0))
      ->capture_default_str();
}

PredictorOptions baseline_predictor_options(const BaselineArguments& baseline, torch::Device device,
                                            const TaskSource& prior_source) {
  const auto& name = baseline.model.value();
  const auto& info = predictor_info(name);  // throws for unknown names
  if (info.capabilities.trainable) {
    throw UsageError("--model " + name +
                     " is a neural model: use a trained one with --checkpoint PATH");
  }
  PredictorOptions options;
  options.device = device;
  options.fitted.iterations = baseline.fit_iterations;
  options.gp_bayes.grid_points = baseline.bayes_grid;
  options.gp_bayes.periodic_grid_points = baseline.bayes_periodic_grid;
  options.gp_bayes.max_refinements = baseline.bayes_refinements;
  if (info.capabilities.needs_gp_prior) {
    const auto prior = gp_task_prior(prior_source);
    if (!prior) {
      throw UsageError("--model " + name + " averages over the prior of GP tasks (gp1d); " +
                       prior_source.name() + " tasks have none");
    }
    options.gp_prior = *prior;
  }
  return options;
}

PointPredictor point_predictor(const std::string& command,
                               const std::optional<std::string>& checkpoint,
                               const BaselineArguments& baseline, torch::Device device) {
  if (checkpoint.has_value() == baseline.model.has_value()) {
    throw UsageError(command +
                     " needs exactly one of --checkpoint PATH or --model "
                     "{gp-fitted,gp-bayes,gp-se-ard}");
  }
  PointPredictor out;
  if (checkpoint) {
    const auto metadata = read_model_metadata(*checkpoint);
    out.dim_x = metadata.model.dim_x;
    out.dim_y = metadata.model.dim_y;
    out.predictor = load_model_file(*checkpoint, device);
  } else {
    // gp-bayes averages over the prior of the gp1d tasks the shipped 1-D models learnt.
    const auto gp1d = make_task_source("gp1d", nlohmann::json::object());
    out.predictor =
        make_predictor(*baseline.model, baseline_predictor_options(baseline, device, *gp1d));
  }
  if (out.predictor->info().capabilities.needs_oracle) {
    throw UsageError("--model " + out.predictor->info().name +
                     " needs the process that generated the data, which a file does not "
                     "carry: use gp-fitted or gp-bayes");
  }
  return out;
}

}  // namespace npe::cli
