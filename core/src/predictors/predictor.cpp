#include "npe/predictors/predictor.h"

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

torch::Tensor Predictor::joint_log_likelihood(const TaskBatch& batch) {
  validate_task(batch.task, /*require_target_outputs=*/true);
  auto prediction = predict(batch);
  return log_likelihood_per_task(prediction, batch.task.yt.to(prediction.mean.device()))
      .to(torch::kCPU, torch::kFloat64);
}

torch::Tensor Predictor::sample(const TaskBatch& batch, int64_t count, uint64_t seed) {
  (void)batch;
  (void)count;
  (void)seed;
  throw ConfigError(info().display_name +
                    " predicts each target independently: it cannot draw coherent samples");
}

}  // namespace npe
