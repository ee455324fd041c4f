#pragma once
// Evaluation: mean log-likelihood per target point over many tasks, with its standard error.

#include "npe/data/task_source.h"
#include "npe/predictors/predictor.h"
#include "npe/progress.h"
#include "npe/seeds.h"

namespace npe {

struct EvalOptions {
  int64_t num_tasks = 1024;
  int64_t batch_size = 16;
  uint64_t seed = 0;
  /// Context and target inputs are translated by this vector (see Translation).
  Translation shift;
  /// Which seed stream the tasks come from (test by default; validation during training).
  uint64_t stream = kTestStream;
  /// Which part of the data (matters for dataset-backed tasks such as images).
  Split split = Split::Test;
};

struct EvalResult {
  double ll_mean = 0.0;
  double ll_stderr = 0.0;
  int64_t num_tasks = 0;
  bool cancelled = false;
};

/// Evaluates the predictor on options.num_tasks tasks. The tasks depend only on (seed, shift,
/// batch size, split), so results at different shifts are paired. Throws InvalidInputError when
/// a prediction is not finite, ConfigError for bad options or a predictor that cannot handle
/// the tasks.
EvalResult evaluate(Predictor& predictor, const TaskSource& source, const EvalOptions& options,
                    const ProgressCallback& progress = {});

}  // namespace npe
