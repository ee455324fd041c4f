#include "npe/ground/prediction.h"

#include <cmath>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

namespace {
const double kHalfLog2Pi = 0.5 * std::log(2.0 * M_PI);
}  // namespace

torch::Tensor gaussian_log_density(const torch::Tensor& y, const torch::Tensor& mean,
                                   const torch::Tensor& stddev) {
  auto z = (y.to(mean.scalar_type()) - mean) / stddev;
  return -0.5 * z.square() - stddev.log() - kHalfLog2Pi;
}

double gaussian_log_density(double y, double mean, double stddev) {
  const double z = (y - mean) / stddev;
  return -0.5 * z * z - std::log(stddev) - kHalfLog2Pi;
}

double central_interval_quantile(double level) {
  return std::sqrt(2.0) * torch::erfinv(torch::tensor(level, torch::kFloat64)).item<double>();
}

torch::Tensor log_likelihood_per_task(const Prediction& prediction, const torch::Tensor& y) {
  if (!y.defined() || y.sizes() != prediction.mean.sizes()) {
    throw InvalidInputError("log-likelihood: outputs and prediction have different shapes");
  }
  if (y.size(1) == 0) return torch::zeros({y.size(0)}, prediction.mean.options());
  return gaussian_log_density(y, prediction.mean, prediction.stddev).sum(-1).mean(-1);
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
