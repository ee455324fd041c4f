#pragma once
// Gaussian predictive distributions and their log-likelihood.

#include <torch/types.h>

namespace npe {

/// Independent Gaussian per target point and output dimension. mean, stddev: [B,Nt,Dy].
struct Prediction {
  torch::Tensor mean;
  torch::Tensor stddev;
};

/// Log-likelihood of y [B,Nt,Dy] under the prediction, summed over output dimensions and
/// averaged over target points: one value per task, shape [B]. With Nt = 0 the result is 0.
torch::Tensor log_likelihood_per_task(const Prediction& prediction, const torch::Tensor& y);

/// Concatenates predictions along the target dimension (used when predicting in chunks).
Prediction concat_targets(const std::vector<Prediction>& parts);

}  // namespace npe
