#include "npe/predictors/equivariance.h"

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

double prediction_difference(const Prediction& a, const Prediction& b) {
  if (!a.mean.defined() || !b.mean.defined() || a.mean.sizes() != b.mean.sizes() ||
      a.stddev.sizes() != b.stddev.sizes()) {
    throw InvalidInputError("cannot compare predictions of different shapes");
  }
  if (a.mean.numel() == 0) return 0.0;
  auto diff = [](const torch::Tensor& x, const torch::Tensor& y) {
    return (x.to(torch::kCPU, torch::kFloat64) - y.to(torch::kCPU, torch::kFloat64))
        .abs()
        .max()
        .item<double>();
  };
  return std::max(diff(a.mean, b.mean), diff(a.stddev, b.stddev));
}

double equivariance_error(Predictor& predictor, const TaskBatch& batch, const Translation& tau,
                          const Prediction* prediction) {
  const auto original = prediction ? *prediction : predictor.predict(batch);
  TaskBatch moved{batch.task.translated(tau), batch.oracle};
  return prediction_difference(original, predictor.predict(moved));
}

}  // namespace npe
