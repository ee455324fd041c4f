#pragma once
// Gaussian predictive distributions and their log-likelihood.

#include <torch/types.h>

namespace npe {

/// Independent Gaussian per target point and output dimension. mean, stddev: [B,Nt,Dy].
struct Prediction {
  torch::Tensor mean;
  torch::Tensor stddev;
};

/// Log-density of y under N(mean, stddev^2), element by element (any matching shapes): the one
/// definition of the Gaussian log-likelihood every figure of this project uses.
torch::Tensor gaussian_log_density(const torch::Tensor& y, const torch::Tensor& mean,
                                   const torch::Tensor& stddev);
/// The same for one number (the CLI's tables).
double gaussian_log_density(double y, double mean, double stddev);

/// Half-width in standard deviations of the central interval of a Gaussian that holds `level`
/// of its mass (P(|z| <= q) = level; 0.9 gives 1.645): what coverage figures count.
double central_interval_quantile(double level);

/// Log-likelihood of y [B,Nt,Dy] under the prediction, summed over output dimensions and
/// averaged over target points: one value per task, shape [B]. With Nt = 0 the result is 0.
torch::Tensor log_likelihood_per_task(const Prediction& prediction, const torch::Tensor& y);

/// Concatenates predictions along the target dimension (used when predicting in chunks).
Prediction concat_targets(const std::vector<Prediction>& parts);

}  // namespace npe
