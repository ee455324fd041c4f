#include "npe/ground/gp_posterior.h"

#include <cmath>
#include <utility>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/linalg.h"

namespace npe {

Prediction gp_posterior_predictive(const KernelSpec& kernel, double noise_std,
                                   const torch::Tensor& xc, const torch::Tensor& yc,
                                   const torch::Tensor& xt) {
  const auto out_dtype = xt.scalar_type();
  auto xc64 = xc.to(torch::kFloat64);
  auto yc64 = yc.to(torch::kFloat64);
  auto xt64 = xt.to(torch::kFloat64);
  const double noise_var = noise_std * noise_std;
  const auto num_targets = xt.size(0);
  const auto dim_y = yc.size(-1);
  auto prior_var = torch::full({num_targets}, kernel.variance, xt64.options());
  torch::Tensor mean, latent_var;
  if (xc.size(0) == 0) {
    mean = torch::zeros({num_targets, dim_y}, xt64.options());
    latent_var = prior_var;
  } else {
    auto k_cc = kernel_matrix(kernel, xc64, xc64);
    k_cc = k_cc + noise_var * torch::eye(k_cc.size(0), k_cc.options());
    auto chol = jittered_cholesky(k_cc);
    auto k_ct = kernel_matrix(kernel, xc64, xt64);
    auto alpha = torch::cholesky_solve(yc64, chol);
    mean = k_ct.transpose(0, 1).matmul(alpha);
    auto v = torch::linalg_solve_triangular(chol, k_ct, /*upper=*/false);
    latent_var = (prior_var - v.square().sum(0)).clamp_min(0.0);
  }
  auto stddev = (latent_var + noise_var).sqrt().unsqueeze(-1).expand({num_targets, dim_y});
  return {mean.to(out_dtype), stddev.contiguous().to(out_dtype)};
}

GpJointPosterior gp_posterior_joint(const KernelSpec& kernel, double noise_std,
                                    const torch::Tensor& xc, const torch::Tensor& yc,
                                    const torch::Tensor& xt) {
  auto xc64 = xc.to(torch::kFloat64);
  auto xt64 = xt.to(torch::kFloat64);
  const double noise_var = noise_std * noise_std;
  const auto num_targets = xt.size(0);
  const auto dim_y = yc.size(-1);
  auto covariance = kernel_matrix(kernel, xt64, xt64);
  torch::Tensor mean;
  if (xc.size(0) == 0) {
    mean = torch::zeros({num_targets, dim_y}, xt64.options());
  } else {
    auto k_cc = kernel_matrix(kernel, xc64, xc64);
    k_cc = k_cc + noise_var * torch::eye(k_cc.size(0), k_cc.options());
    auto chol = jittered_cholesky(k_cc);
    auto k_ct = kernel_matrix(kernel, xc64, xt64);
    mean = k_ct.transpose(0, 1).matmul(torch::cholesky_solve(yc.to(torch::kFloat64), chol));
    auto v = torch::linalg_solve_triangular(chol, k_ct, /*upper=*/false);
    covariance = covariance - v.transpose(0, 1).matmul(v);
  }
  covariance = covariance + noise_var * torch::eye(num_targets, covariance.options());
  if (dim_y > 1) covariance = torch::kron(covariance, torch::eye(dim_y, covariance.options()));
  return {mean.to(xt.scalar_type()), covariance};
}

JointGaussian gp_joint_predictive(const Task& task, const std::vector<KernelSpec>& kernels,
                                  const std::vector<double>& noise_std) {
  validate_task(task);
  if (int64_t(kernels.size()) != task.batch_size() ||
      int64_t(noise_std.size()) != task.batch_size()) {
    throw InvalidInputError("GP joint predictive needs one kernel and noise level per task");
  }
  check_joint_size(task.num_targets(), task.dim_y(), "a GP");
  std::vector<torch::Tensor> means, covariances;
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    auto p = gp_posterior_joint(kernels[b], noise_std[b], task.xc[b], task.yc[b], task.xt[b]);
    means.push_back(p.mean);
    covariances.push_back(p.covariance);
  }
  return joint_gaussian_from_covariance(torch::stack(means), torch::stack(covariances));
}

torch::Tensor gp_log_marginal_likelihood(KernelKind kind, const torch::Tensor& xc,
                                         const torch::Tensor& yc, const torch::Tensor& lengthscale,
                                         const torch::Tensor& variance,
                                         const torch::Tensor& noise_var,
                                         const torch::Tensor& period) {
  const auto n = xc.size(-2);
  const auto dim_y = yc.size(-1);
  auto k = kernel_matrix(kind, xc, xc, lengthscale, variance, period);
  k = k + noise_var * torch::eye(n, k.options());
  auto chol = jittered_cholesky(k);
  auto alpha = torch::cholesky_solve(yc, chol);
  auto quad = (yc * alpha).sum({-1, -2});
  auto log_det = 2.0 * chol.diagonal(0, -2, -1).log().sum(-1);
  return -0.5 * quad - 0.5 * dim_y * log_det - 0.5 * n * dim_y * std::log(2.0 * M_PI);
}

Prediction gp_oracle_predict(const Task& task, const std::vector<KernelSpec>& kernels,
                             double noise_std) {
  validate_task(task);
  if (static_cast<int64_t>(kernels.size()) != task.batch_size()) {
    throw InvalidInputError(
        "GP oracle needs one kernel per task: " + std::to_string(kernels.size()) + " kernels for " +
        std::to_string(task.batch_size()) + " tasks");
  }
  std::vector<torch::Tensor> means, stddevs;
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    auto p = gp_posterior_predictive(kernels[b], noise_std, task.xc[b], task.yc[b], task.xt[b]);
    means.push_back(p.mean);
    stddevs.push_back(p.stddev);
  }
  return {torch::stack(means), torch::stack(stddevs)};
}

}  // namespace npe
