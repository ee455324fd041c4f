#pragma once
// Evaluation: mean log-likelihood per target point over many tasks, with its standard error.

#include <functional>

#include "npe/gp.h"
#include "npe/model.h"
#include "npe/progress.h"
#include "npe/seeds.h"
#include "npe/task_source.h"

namespace npe {

struct EvalOptions {
  int64_t num_tasks = 1024;
  int64_t batch_size = 16;
  uint64_t seed = 0;
  /// Both context and target inputs are translated by this amount (in every dimension).
  double shift = 0.0;
  torch::Device device = torch::kCPU;
  /// Which seed stream the tasks come from (test by default; validation during training).
  uint64_t stream = kTestStream;
};

struct EvalResult {
  double ll_mean = 0.0;
  double ll_stderr = 0.0;
  int64_t num_tasks = 0;
  bool cancelled = false;
};

/// Predicts a batch of tasks (on the device the predictor chooses).
using BatchPredictor = std::function<Prediction(const TaskBatch&)>;

/// Evaluates the predictor on options.num_tasks tasks. The tasks depend only on (seed, shift,
/// batch size), so results at different shifts are paired. Throws InvalidInputError when a
/// prediction is not finite.
EvalResult evaluate(const BatchPredictor& predictor, const TaskSource& source,
                    const EvalOptions& options, const ProgressCallback& progress = {});

/// Predictor for a neural process (no gradients, eval mode, on `device`).
BatchPredictor model_predictor(NeuralProcessImpl& model, torch::Device device);
/// The GP oracle (needs tasks that carry their generating GP).
BatchPredictor gp_oracle_predictor();
/// The fitted GP.
BatchPredictor gp_fitted_predictor(const FittedGpOptions& options);

}  // namespace npe
