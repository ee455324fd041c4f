#pragma once
// The training loop: AdamW on the negative mean log-likelihood per target point.

#include <limits>
#include <string>
#include <vector>

#include <torch/types.h>

#include "npe/data/task_source.h"
#include "npe/models/model.h"

namespace npe {

struct TrainOptions {
  int64_t steps = 10000;
  int64_t batch_size = 16;
  /// Peak AdamW learning rate.
  double learning_rate = 5e-4;
  /// Learning-rate schedule: "constant", or "cosine" (decays from learning_rate to 0 over the
  /// steps along half a cosine).
  std::string lr_schedule = "constant";
  double weight_decay = 0.01;
  /// Gradient values are clipped to [-clip, clip].
  double grad_clip_value = 0.5;
  /// Seeds the weights' initialisation is NOT affected by this (seed torch before building the
  /// model); this seeds the training tasks.
  uint64_t seed = 0;
  /// Validate every this many steps (and at the end); 0 validates only at the end.
  int64_t validation_every = 1000;
  int64_t validation_tasks = 256;
  torch::Device device = torch::kCPU;
};

struct TrainProgress {
  int64_t step = 0;
  int64_t total_steps = 0;
  /// Mean training loss over the steps since the last report.
  double loss = std::numeric_limits<double>::quiet_NaN();
  /// Latest validation log-likelihood (NaN before the first validation).
  double validation_ll = std::numeric_limits<double>::quiet_NaN();
  double elapsed_s = 0.0;
};

/// Called after every step; returning false stops training (the result says cancelled).
using TrainProgressCallback = std::function<bool(const TrainProgress&)>;

struct TrainResult {
  int64_t steps = 0;
  double final_loss = std::numeric_limits<double>::quiet_NaN();
  double validation_ll = std::numeric_limits<double>::quiet_NaN();
  double validation_ll_stderr = std::numeric_limits<double>::quiet_NaN();
  double wall_time_s = 0.0;
  bool cancelled = false;
  /// (step, validation log-likelihood) pairs.
  std::vector<std::pair<int64_t, double>> validation_history;
};

/// Trains `model` (moved to options.device) on tasks from `source`. Validation uses a fixed set
/// of tasks that does not depend on options.seed. Throws InvalidInputError when the loss
/// becomes non-finite (with the step), ConfigError for bad options.
TrainResult train_model(NeuralProcessImpl& model, const TaskSource& source,
                        const TrainOptions& options, const TrainProgressCallback& progress = {});

}  // namespace npe
