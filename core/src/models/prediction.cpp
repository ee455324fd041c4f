#include "npe/models/prediction.h"

#include <cmath>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

torch::Tensor log_likelihood_per_task(const Prediction& prediction, const torch::Tensor& y) {
  if (!y.defined() || y.sizes() != prediction.mean.sizes()) {
    throw InvalidInputError("log-likelihood: outputs and prediction have different shapes");
  }
  if (y.size(1) == 0) return torch::zeros({y.size(0)}, prediction.mean.options());
  const double half_log_2pi = 0.5 * std::log(2.0 * M_PI);
  auto z = (y.to(prediction.mean.scalar_type()) - prediction.mean) / prediction.stddev;
  auto log_density = -0.5 * z.square() - prediction.stddev.log() - half_log_2pi;
  return log_density.sum(-1).mean(-1);
}

Prediction concat_targets(const std::vector<Prediction>& parts) {
  std::vector<torch::Tensor> means, stddevs;
  for (const auto& p : parts) {
    means.push_back(p.mean);
    stddevs.push_back(p.stddev);
  }
  return {torch::cat(means, 1), torch::cat(stddevs, 1)};
}

}  // namespace npe
