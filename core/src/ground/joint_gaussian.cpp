#include "npe/ground/joint_gaussian.h"

#include <cmath>
#include <string>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/linalg.h"

namespace npe {

void check_joint_size(int64_t num_targets, int64_t dim_y, const char* what) {
  if (num_targets * dim_y > kMaxJointTargets) {
    throw ResourceLimitError(
        std::string(what) + " predicts at most " + std::to_string(kMaxJointTargets) +
        " values jointly (targets x outputs); " + std::to_string(num_targets * dim_y) + " asked");
  }
}

Prediction JointGaussian::marginals() const {
  const auto shape = mean.sizes();
  auto stddev = scale_tril.square().sum(-1).sqrt().view(shape).to(mean.scalar_type());
  return {mean, stddev};
}

torch::Tensor JointGaussian::covariance() const {
  return scale_tril.matmul(scale_tril.transpose(-1, -2));
}

torch::Tensor JointGaussian::log_likelihood(const torch::Tensor& y) const {
  if (!y.defined() || y.sizes() != mean.sizes()) {
    throw InvalidInputError("joint log-likelihood: outputs and prediction have different shapes");
  }
  const auto batch = mean.size(0), num_targets = mean.size(1);
  if (num_targets == 0) return torch::zeros({batch}, mean.options());
  const auto n = scale_tril.size(-1);
  auto residual = (y.to(torch::kFloat64) - mean.to(torch::kFloat64)).reshape({batch, n, 1});
  auto whitened = torch::linalg_solve_triangular(scale_tril, residual, /*upper=*/false);
  auto log_det = scale_tril.diagonal(0, -2, -1).log().sum(-1);
  auto log_density =
      -0.5 * whitened.square().sum({-1, -2}) - log_det - 0.5 * double(n) * std::log(2.0 * M_PI);
  return (log_density / double(num_targets)).to(mean.scalar_type());
}

torch::Tensor JointGaussian::sample(int64_t count, const torch::Generator& generator) const {
  const auto batch = mean.size(0), n = scale_tril.size(-1);
  auto noise = at::normal(0.0, 1.0, {count, batch, n, 1}, generator,
                          scale_tril.options().device(torch::kCPU))
                   .to(scale_tril.device());
  auto draws = scale_tril.unsqueeze(0).matmul(noise).view({count, batch, n});
  auto shape = mean.sizes().vec();
  shape.insert(shape.begin(), count);
  return (draws.view(shape) + mean.to(torch::kFloat64).unsqueeze(0)).to(mean.scalar_type());
}

JointGaussian joint_gaussian_from_covariance(const torch::Tensor& mean,
                                             const torch::Tensor& covariance) {
  check_joint_size(mean.size(1), mean.size(2), "a joint Gaussian");
  if (mean.size(1) == 0) {
    return {mean, torch::zeros({mean.size(0), 0, 0}, mean.options().dtype(torch::kFloat64))};
  }
  return {mean, jittered_cholesky(covariance.to(torch::kFloat64))};
}

JointGaussian joint_gaussian_from_marginals(const Prediction& marginals) {
  const auto batch = marginals.mean.size(0);
  auto stddev = marginals.stddev.to(torch::kFloat64).reshape({batch, -1});
  return {marginals.mean, torch::diag_embed(stddev)};
}

}  // namespace npe
