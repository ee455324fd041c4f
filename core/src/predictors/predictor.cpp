#include "npe/predictors/predictor.h"

#include <limits>

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

double Predictor::prediction_flops(const BatchShape& shape) const {
  const auto model = neural_model();
  if (!model || !info().capabilities.flop_model) return std::numeric_limits<double>::quiet_NaN();
  return forward_flops(model->config(), shape);
}

}  // namespace npe
