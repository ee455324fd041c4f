#pragma once
// The reference workload: the work the authors' benchmark
// (../shared/reference/official_bench/bench.py) times, so that `npe bench --workload reference`
// and that script measure the same thing and can be compared as ratios.
//
// Training step: batch 16, N_c 64, N_t 128; zero_grad, forward, Gaussian NLL (mean over target
// points), backward, gradient-norm clipping at 0.5, AdamW lr 5e-4. Prediction: batch 1, N_c 64,
// N_t 256, no gradients. Tasks are y = sin(2x + phase) + 0.1 noise with x_c ~ U(-2, 2) and
// x_t ~ U(-4, 4), as in the script.

#include <string>
#include <vector>

#include "npe/ground/task.h"
#include "npe/models/model.h"
#include "npe/models/model_config.h"

namespace npe::cli {

struct ReferenceWorkload {
  int64_t train_batch = 16, train_context = 64, train_targets = 128;
  int64_t predict_context = 64, predict_targets = 256;
  double learning_rate = 5e-4, gradient_norm_clip = 0.5;
};

/// The configuration of `kind` that matches the reference YAML configs at paper size
/// (D_z 128, 5 layers, 8 heads x 16; TE-TNP: rho MLP width 128, no location update, self- and
/// cross-attention sharing each layer's weights). Throws ConfigError for an unknown kind.
ModelConfig reference_model_config(const std::string& kind);

/// `batch` synthetic tasks drawn with `seed`.
Task reference_tasks(int64_t batch, int64_t num_context, int64_t num_targets, uint64_t seed);

/// Milliseconds of each of `steps` training steps after `warmup` untimed ones; the model is
/// trained in place on four fixed batches used in turn, as the script does.
std::vector<double> time_reference_training(NeuralProcessImpl& model,
                                            const ReferenceWorkload& workload, int64_t steps,
                                            int64_t warmup);

/// Milliseconds of each of `repeats` predictions after `warmup` untimed ones.
std::vector<double> time_reference_prediction(NeuralProcessImpl& model,
                                              const ReferenceWorkload& workload, int64_t repeats,
                                              int64_t warmup);

}  // namespace npe::cli
