#pragma once
// The training loop: AdamW on the negative mean log-likelihood per target point.

#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "npe/data/task_source.h"
#include "npe/models/model.h"
#include "npe/option_fields.h"

namespace npe {

struct TrainOptions {
  int64_t steps = 10000;
  /// Tasks per micro-batch (tasks of one micro-batch share N_c).
  int64_t batch_size = 16;
  /// Micro-batches per step whose gradients are averaged (gradient accumulation): a step sees
  /// accumulate x batch_size tasks. Micro-batch k draws the tasks rank k of a data-parallel run
  /// with one micro-batch per rank draws, so both give the same step.
  int64_t accumulate = 1;
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
  /// Also keep the model of the best validation so far (best_checkpoint_path of the
  /// checkpoint), for runs whose validation turns down before their last step (overfitting).
  bool keep_best = false;
  torch::Device device = torch::kCPU;

  /// The settings users choose, with their ranges and help (all but the seed, which has no
  /// range, and the device): the one list that validate(), the checkpoints' JSON, npe train's
  /// options and the Training tab's fields are made from.
  void fields(OptionVisitor& v);
  /// fields() of a copy, for reading and describing.
  FieldVisit visit_fields() const;

  /// Every field but the device (checkpoints record where they were trained separately).
  nlohmann::json to_json() const;
  /// Missing fields keep their defaults. Throws ConfigError for wrong types.
  static TrainOptions from_json(const nlohmann::json& json);
  /// The ranges of fields(), for new settings (npe train's options, the Training tab). Throws
  /// ConfigError (ResourceLimitError above a maximum) naming the first invalid field.
  void validate() const;
  /// What a job needs to run at all (a positive learning rate, a known schedule, ...): looser
  /// than validate(), so a checkpoint written when the inputs had wider ranges (a learning rate
  /// down to 1e-12, no maxima) still loads and resumes. Throws ConfigError.
  void check_trainable() const;
};

/// Seed of micro-batch `shard` of training step `step`. Shard 0 is the stream single-process
/// runs have always used, so their results reproduce; shard r of a data-parallel run is rank
/// r's (or accumulated micro-batch r's) part of the step.
uint64_t training_batch_seed(uint64_t seed, int64_t step, int64_t shard);

/// Where TrainOptions::keep_best writes: "run.pt" -> "run.best.pt" (with its .json).
std::filesystem::path best_checkpoint_path(const std::filesystem::path& checkpoint);

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

}  // namespace npe
