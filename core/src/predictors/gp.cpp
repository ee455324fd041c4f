#include "npe/predictors/gp.h"

#include <cmath>
#include <functional>
#include <utility>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/ground/gp_posterior.h"
#include "npe/linalg.h"

namespace npe {

namespace {

// Maximises the summed log marginal likelihood (per context point) over `parameters` with Adam,
// keeping them in range after every step: extreme values make the Cholesky ill conditioned.
void maximise_marginal_likelihood(std::vector<torch::Tensor> parameters,
                                  const std::function<torch::Tensor()>& objective,
                                  const FittedGpOptions& options, int64_t num_context,
                                  const std::function<void()>& clamp) {
  torch::optim::Adam optimizer(std::move(parameters),
                               torch::optim::AdamOptions(options.learning_rate));
  const double per_point = 1.0 / static_cast<double>(num_context);
  for (int it = 0; it < options.iterations; ++it) {
    optimizer.zero_grad();
    auto loss = -objective().sum() * per_point;
    loss.backward();
    optimizer.step();
    torch::NoGradGuard no_grad;
    clamp();
  }
}

// SE-ARD: log lengthscales [B,1,Dx], fitted jointly with variance and noise per task.
FittedGp fit_gp_ard(const Task& task, const FittedGpOptions& options) {
  torch::AutoGradMode enable_grad(true);
  auto xc = task.xc.to(torch::kCPU, torch::kFloat64);
  auto yc = task.yc.to(torch::kCPU, torch::kFloat64);
  const auto batch = task.batch_size();
  auto opts = xc.options();
  // Initial lengthscales: the spread of the context inputs per dimension (a scale-free start).
  auto spread = xc.std(1, /*unbiased=*/false, /*keepdim=*/true).clamp_min(1e-3);  // [B,1,Dx]
  auto log_lengthscale = (spread.log() - std::log(2.0)).detach().clone().requires_grad_(true);
  auto log_variance = yc.var(1, false, true)
                          .mean(-1, true)
                          .clamp_min(1e-3)
                          .log()
                          .detach()
                          .clone()
                          .requires_grad_(true);  // [B,1,1]
  auto log_noise = torch::full({batch, 1, 1}, std::log(0.05), opts).requires_grad_(true);
  const double noise_floor = 1e-4;
  auto objective = [&]() {
    auto scaled = xc / log_lengthscale.exp();
    const auto one = torch::ones({1, 1, 1}, opts);
    return gp_log_marginal_likelihood(KernelKind::SquaredExponential, scaled, yc, one,
                                      log_variance.exp(), log_noise.exp() + noise_floor, one);
  };
  maximise_marginal_likelihood({log_lengthscale, log_variance, log_noise}, objective, options,
                               task.num_context(), [&] {
                                 log_lengthscale.clamp_(std::log(1e-3), std::log(1e4));
                                 log_variance.clamp_(std::log(1e-4), std::log(1e4));
                                 log_noise.clamp_(std::log(1e-4), std::log(10.0));
                               });
  torch::NoGradGuard no_grad;
  FittedGp result;
  auto ls = log_lengthscale.exp().contiguous();
  for (int64_t b = 0; b < batch; ++b) {
    KernelSpec spec;
    spec.kind = KernelKind::SquaredExponential;
    spec.variance = log_variance[b].exp().item<double>();
    auto row = ls[b][0].contiguous();
    spec.ard_lengthscales.assign(row.data_ptr<double>(), row.data_ptr<double>() + row.numel());
    spec.lengthscale = row.mean().item<double>();
    result.kernels.push_back(spec);
    result.noise_std.push_back(std::sqrt(log_noise[b].exp().item<double>() + noise_floor));
  }
  return result;
}

// The periodic kernel's marginal likelihood has a local optimum near every multiple of the
// true period, so gradient ascent needs a good start: per task, the best of a log-spaced grid
// of periods (unit lengthscale and variance, noise 0.1), evaluated without gradients. Its peak
// is about period / (input range) wide in relative terms, hence a fine grid.
torch::Tensor initial_log_period(const torch::Tensor& xc, const torch::Tensor& yc,
                                 const FittedGpOptions& options) {
  torch::NoGradGuard no_grad;
  auto opts = xc.options();
  const auto one = torch::ones({1, 1, 1}, opts);
  const auto noise = torch::full({1, 1, 1}, 0.01, opts);
  auto grid = torch::linspace(std::log(options.min_period), std::log(options.max_period),
                              options.period_grid, opts);
  std::vector<torch::Tensor> lml;
  for (int64_t i = 0; i < grid.size(0); ++i) {
    lml.push_back(gp_log_marginal_likelihood(KernelKind::Periodic, xc, yc, one, one, noise,
                                             grid[i].exp().view({1, 1, 1})));
  }
  return grid.index_select(0, torch::stack(lml).argmax(0)).view({-1, 1, 1});  // [B,1,1]
}

}  // namespace

FittedGp fit_gp(const Task& task, const FittedGpOptions& options) {
  validate_task(task);
  if (options.kernels.empty()) throw ConfigError("fitted GP needs at least one kernel family");
  if (options.iterations < 0) throw ConfigError("fitted GP iterations must be >= 0");
  if (!(options.min_period > 0.0 && options.max_period > options.min_period) ||
      options.period_grid < 2) {
    throw ConfigError(
        "fitted GP: the period grid needs 0 < min_period < max_period and >= 2 "
        "points");
  }
  const auto batch = task.batch_size();
  FittedGp result;
  if (task.num_context() == 0) {
    for (int64_t b = 0; b < batch; ++b) {
      KernelSpec prior;
      prior.kind = options.ard ? KernelKind::SquaredExponential : options.kernels.front();
      result.kernels.push_back(prior);
      result.noise_std.push_back(0.1);
    }
    return result;
  }
  if (options.ard) return fit_gp_ard(task, options);
  torch::AutoGradMode enable_grad(true);
  auto xc = task.xc.to(torch::kCPU, torch::kFloat64);
  auto yc = task.yc.to(torch::kCPU, torch::kFloat64);
  const auto& kinds = options.kernels;
  const auto count = static_cast<int64_t>(kinds.size());
  auto opts = xc.options();
  // One parameter set per kernel family and task, optimised jointly (the objectives are
  // independent, so a shared Adam instance does not couple them).
  auto log_lengthscale = torch::zeros({count, batch, 1, 1}, opts).requires_grad_(true);
  auto log_variance = torch::zeros({count, batch, 1, 1}, opts).requires_grad_(true);
  auto log_noise = torch::full({count, batch, 1, 1}, std::log(0.05), opts).requires_grad_(true);
  auto log_period = torch::zeros({count, batch, 1, 1}, opts);
  for (int64_t k = 0; k < count; ++k) {
    if (kinds[k] == KernelKind::Periodic) log_period[k] = initial_log_period(xc, yc, options);
  }
  log_period.requires_grad_(true);
  const double noise_floor = 1e-4;
  // The periodic family is eq. 36's: its scale is the period, its lengthscale stays 1. With a
  // free lengthscale a long period mimics a smooth SE kernel on the context and wins the
  // marginal likelihood, then extrapolates periodically (measured: SE tasks' LL -1.26 against
  // the oracle's -0.13).
  const auto unit = torch::zeros({batch, 1, 1}, opts);
  auto objective = [&]() {
    std::vector<torch::Tensor> lml;
    for (int64_t k = 0; k < count; ++k) {
      const auto log_ls = kinds[k] == KernelKind::Periodic ? unit : log_lengthscale[k];
      lml.push_back(
          gp_log_marginal_likelihood(kinds[k], xc, yc, log_ls.exp(), log_variance[k].exp(),
                                     log_noise[k].exp() + noise_floor, log_period[k].exp()));
    }
    return torch::stack(lml);  // [K, B]
  };
  maximise_marginal_likelihood({log_lengthscale, log_variance, log_noise, log_period}, objective,
                               options, task.num_context(), [&] {
                                 log_lengthscale.clamp_(std::log(1e-2), std::log(1e2));
                                 log_variance.clamp_(std::log(1e-3), std::log(1e2));
                                 log_noise.clamp_(std::log(1e-4), std::log(10.0));
                                 log_period.clamp_(std::log(options.min_period),
                                                   std::log(options.max_period));
                               });
  torch::NoGradGuard no_grad;
  auto best = objective().argmax(0);  // [B]
  for (int64_t b = 0; b < batch; ++b) {
    const auto k = best[b].item<int64_t>();
    KernelSpec spec;
    spec.kind = kinds[k];
    spec.lengthscale =
        kinds[k] == KernelKind::Periodic ? 1.0 : log_lengthscale[k][b].exp().item<double>();
    spec.variance = log_variance[k][b].exp().item<double>();
    spec.period = log_period[k][b].exp().item<double>();
    result.kernels.push_back(spec);
    result.noise_std.push_back(std::sqrt(log_noise[k][b].exp().item<double>() + noise_floor));
  }
  return result;
}

Prediction gp_fitted_predict(const Task& task, const FittedGpOptions& options) {
  auto fitted = fit_gp(task, options);
  std::vector<torch::Tensor> means, stddevs;
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    auto p = gp_posterior_predictive(fitted.kernels[b], fitted.noise_std[b], task.xc[b], task.yc[b],
                                     task.xt[b]);
    means.push_back(p.mean);
    stddevs.push_back(p.stddev);
  }
  return {torch::stack(means), torch::stack(stddevs)};
}

JointGaussian gp_fitted_joint(const Task& task, const FittedGpOptions& options) {
  auto fitted = fit_gp(task, options);
  return gp_joint_predictive(task, fitted.kernels, fitted.noise_std);
}

}  // namespace npe
