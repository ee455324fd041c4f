#include "npe/predictors/gp_bayes.h"
#include "npe/ground/gp_posterior.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/ground/joint_gaussian.h"
#include "npe/linalg.h"
#include "npe/predictors/gp.h"

namespace npe {
namespace {

constexpr double kLog2Pi = 1.8378770664093453;  // log(2 pi)

// The covariance between x1 [N,Dx] and x2 [M,Dx] under each kernel: [H,N,M]. Consecutive
// kernels of one family are evaluated as one batch (their scales broadcast over the leading
// dimension).
torch::Tensor hypothesis_kernels(const std::vector<KernelSpec>& kernels, const torch::Tensor& x1,
                                 const torch::Tensor& x2) {
  const auto opts = x1.options();
  std::vector<torch::Tensor> parts;
  for (size_t first = 0; first < kernels.size();) {
    size_t last = first;
    std::vector<double> lengthscales, variances, periods;
    while (last < kernels.size() && kernels[last].kind == kernels[first].kind) {
      lengthscales.push_back(kernels[last].lengthscale);
      variances.push_back(kernels[last].variance);
      periods.push_back(kernels[last].period);
      ++last;
    }
    auto column = [&](const std::vector<double>& v) {
      return torch::tensor(v, opts).view({-1, 1, 1});
    };
    parts.push_back(kernel_matrix(kernels[first].kind, x1, x2, column(lengthscales),
                                  column(variances), column(periods)));
    first = last;
  }
  return torch::cat(parts, 0);
}

// The context under each kernel: the noisy covariance's Cholesky factor, K^-1 yc and the log
// marginal likelihood log p(yc | xc, kernel) [H] (output dimensions independent). The
// hypotheses are factorised in blocks of about 16 MiB of covariance: hundreds of hypotheses at
// once on a few hundred context points would be gigabytes of temporaries (each one fresh pages
// the kernel must fault in, and a failed factorisation retries the whole batch with jitter).
// With keep_factors false only the log evidence is returned (the refinement needs no more).
struct ContextFit {
  torch::Tensor chol, alpha, log_evidence;
};
ContextFit fit_context(const std::vector<KernelSpec>& kernels, double noise_var,
                       const torch::Tensor& xc, const torch::Tensor& yc, bool keep_factors = true) {
  const auto num_h = static_cast<int64_t>(kernels.size());
  const auto nc = xc.size(0), dim_y = yc.size(-1);
  const int64_t block = std::max<int64_t>(1, (int64_t(2) << 20) / std::max<int64_t>(1, nc * nc));
  const auto noise = noise_var * torch::eye(nc, xc.options());
  std::vector<torch::Tensor> chols, alphas, evidences;
  for (int64_t first = 0; first < num_h; first += block) {
    const auto last = std::min(num_h, first + block);
    const std::vector<KernelSpec> part(kernels.begin() + first, kernels.begin() + last);
    auto chol = jittered_cholesky(hypothesis_kernels(part, xc, xc) + noise);         // [h,Nc,Nc]
    auto alpha = torch::cholesky_solve(yc.expand({last - first, nc, dim_y}), chol);  // [h,Nc,Dy]
    auto quad = (yc.unsqueeze(0) * alpha).sum({-1, -2});
    auto log_det = 2.0 * chol.diagonal(0, -2, -1).log().sum(-1);
    evidences.push_back(-0.5 * quad - 0.5 * double(dim_y) * log_det -
                        0.5 * double(nc * dim_y) * kLog2Pi);
    if (keep_factors) {
      chols.push_back(chol);
      alphas.push_back(alpha);
    }
  }
  ContextFit fit;
  if (evidences.empty()) {
    fit.chol = torch::empty({0, nc, nc}, xc.options());
    fit.alpha = torch::empty({0, nc, dim_y}, xc.options());
    fit.log_evidence = torch::empty({0}, xc.options());
    return fit;
  }
  fit.log_evidence = torch::cat(evidences);
  if (keep_factors) {
    fit.chol = torch::cat(chols);
    fit.alpha = torch::cat(alphas);
  }
  return fit;
}

// A cell [low, high] of one family's log-scale prior, and its log prior mass.
struct Cell {
  int64_t family;
  double low, high, log_mass;
};

KernelSpec cell_kernel(const GpTaskConfig& prior, const Cell& c) {
  return paper_kernel(prior.kernels[c.family], std::exp(0.5 * (c.low + c.high)),
                      prior.signal_variance);
}

std::vector<KernelSpec> cell_kernels(const GpTaskConfig& prior, const std::vector<Cell>& cells) {
  std::vector<KernelSpec> kernels;
  for (const auto& c : cells) kernels.push_back(cell_kernel(prior, c));
  return kernels;
}

// Halves every cell that holds more than options.refine_weight of the posterior, keeping the
// halves where that changes its log posterior mass (midpoint rule) by options.refine_tolerance
// or more and halving them again in the next round. Cells stay grouped by family, so
// hypothesis_kernels batches them.
// Each cell's log evidence comes back in `cell_log_evidence`.
std::vector<Cell> refine_cells(const GpHypotheses& hypotheses, double noise_var,
                               const torch::Tensor& xc, const torch::Tensor& yc,
                               std::vector<double>& cell_log_evidence) {
  const auto& options = hypotheses.options;
  std::vector<Cell> cells;
  for (size_t h = 0; h < hypotheses.kernels.size(); ++h) {
    cells.push_back({hypotheses.family[h], hypotheses.log_scale_low[h],
                     hypotheses.log_scale_high[h],
                     hypotheses.log_prior[int64_t(h)].item<double>()});
  }
  auto evidence =
      fit_context(hypotheses.kernels, noise_var, xc, yc, /*keep_factors=*/false).log_evidence;
  std::vector<double> log_evidence(evidence.data_ptr<double>(),
                                   evidence.data_ptr<double>() + evidence.numel());
  std::vector<bool> settled(cells.size(), false);
  for (int round = 0; round < options.max_refinements; ++round) {
    std::vector<double> log_post(cells.size());
    double top = -INFINITY;
    for (size_t c = 0; c < cells.size(); ++c) {
      log_post[c] = cells[c].log_mass + log_evidence[c];
      top = std::max(top, log_post[c]);
    }
    double total = 0.0;
    for (double q : log_post) total += std::exp(q - top);
    const double log_total = top + std::log(total);
    std::vector<size_t> split;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (!settled[c] && std::exp(log_post[c] - log_total) > options.refine_weight) {
        split.push_back(c);
      }
    }
    if (split.empty()) break;
    std::vector<Cell> halves;
    for (size_t c : split) {
      const auto& cell = cells[c];
      const double middle = 0.5 * (cell.low + cell.high);
      const double half_mass = cell.log_mass - std::log(2.0);
      halves.push_back({cell.family, cell.low, middle, half_mass});
      halves.push_back({cell.family, middle, cell.high, half_mass});
    }
    auto fresh = fit_context(cell_kernels(hypotheses.prior, halves), noise_var, xc, yc,
                             /*keep_factors=*/false)
                     .log_evidence.contiguous();
    const double* e = fresh.data_ptr<double>();
    // Each split cell is replaced in place (by its halves, or by itself), so families stay grouped.
    std::vector<Cell> next;
    std::vector<double> next_evidence;
    std::vector<bool> next_settled;
    std::vector<int64_t> half_of(cells.size(), -1);
    for (size_t k = 0; k < split.size(); ++k) half_of[split[k]] = int64_t(k);
    for (size_t c = 0; c < cells.size(); ++c) {
      if (half_of[c] < 0) {
        next.push_back(cells[c]);
        next_evidence.push_back(log_evidence[c]);
        next_settled.push_back(settled[c]);
        continue;
      }
      const auto k = size_t(half_of[c]);
      const double a = halves[2 * k].log_mass + e[2 * k];
      const double b = halves[2 * k + 1].log_mass + e[2 * k + 1];
      const double halved = std::max(a, b) + std::log1p(std::exp(-std::abs(a - b)));
      // Where halving changes nothing, the parent's midpoint rule was already accurate: it
      // stays one hypothesis (each costs an Nt-sized solve later), settled.
      if (std::abs(halved - log_post[c]) < options.refine_tolerance) {
        next.push_back(cells[c]);
        next_evidence.push_back(log_evidence[c]);
        next_settled.push_back(true);
        continue;
      }
      for (int side = 0; side < 2; ++side) {
        next.push_back(halves[2 * k + side]);
        next_evidence.push_back(e[2 * k + side]);
        next_settled.push_back(false);
      }
    }
    cells = std::move(next);
    log_evidence = std::move(next_evidence);
    settled = std::move(next_settled);
  }
  cell_log_evidence = std::move(log_evidence);
  return cells;
}

torch::Tensor prior_variances(const std::vector<KernelSpec>& kernels) {
  std::vector<double> v;
  for (const auto& k : kernels) v.push_back(k.variance);
  return torch::tensor(v, torch::kFloat64);
}

void check_posteriors(const std::vector<GpBayesPosterior>& posteriors, const Task& task) {
  validate_task(task);
  if (int64_t(posteriors.size()) != task.batch_size()) {
    throw InvalidInputError("gp-bayes: one posterior per task is needed");
  }
}

void check_task_index(const Task& task, int64_t b) {
  if (b < 0 || b >= task.batch_size()) {
    throw InvalidInputError("gp-bayes: task index " + std::to_string(b) + " out of range");
  }
}

}  // namespace

GpHypotheses gp_prior_hypotheses(const GpTaskConfig& prior, const GpBayesOptions& options) {
  prior.validate();
  if (options.grid_points < 1 || options.periodic_grid_points < 1) {
    throw ConfigError("gp-bayes: grid_points and periodic_grid_points must be >= 1");
  }
  if (options.max_refinements < 0 || !(options.refine_weight > 0.0) ||
      !(options.refine_tolerance > 0.0)) {
    throw ConfigError("gp-bayes: refinement settings must be positive");
  }
  GpHypotheses h;
  h.prior = prior;
  h.options = options;
  const double lo = std::log(prior.min_lengthscale), hi = std::log(prior.max_lengthscale);
  const double log_family_mass = -std::log(double(prior.kernels.size()));
  std::vector<double> log_prior;
  for (size_t f = 0; f < prior.kernels.size(); ++f) {
    const auto m = prior.kernels[f] == KernelKind::Periodic ? options.periodic_grid_points
                                                            : options.grid_points;
    for (int64_t j = 0; j < m; ++j) {
      // m cells of equal width in log ell, each 1/m of the family's log-uniform prior.
      Cell cell{int64_t(f), lo + (hi - lo) * double(j) / double(m),
                lo + (hi - lo) * double(j + 1) / double(m), log_family_mass - std::log(double(m))};
      h.kernels.push_back(cell_kernel(prior, cell));
      h.family.push_back(cell.family);
      h.log_scale_low.push_back(cell.low);
      h.log_scale_high.push_back(cell.high);
      log_prior.push_back(cell.log_mass);
    }
  }
  h.log_prior = torch::tensor(log_prior, torch::kFloat64);
  return h;
}

GpBayesPosterior gp_bayes_posterior(const GpHypotheses& hypotheses, const torch::Tensor& xc_in,
                                    const torch::Tensor& yc_in) {
  GpBayesPosterior out;
  out.xc = xc_in.to(torch::kCPU, torch::kFloat64);
  const auto yc = yc_in.to(torch::kCPU, torch::kFloat64);
  out.noise_std = hypotheses.prior.noise_std;
  if (out.xc.size(0) == 0) {
    out.kernels = hypotheses.kernels;
    out.family = hypotheses.family;
    out.log_scale_low = hypotheses.log_scale_low;
    out.log_scale_high = hypotheses.log_scale_high;
    out.log_weights = hypotheses.log_prior.clone();
    return out;
  }
  const double noise_var = out.noise_std * out.noise_std;
  std::vector<double> cell_log_evidence;
  const auto cells = refine_cells(hypotheses, noise_var, out.xc, yc, cell_log_evidence);
  std::vector<double> log_joint(cells.size());
  double top = -INFINITY;
  for (size_t c = 0; c < cells.size(); ++c) {
    log_joint[c] = cells[c].log_mass + cell_log_evidence[c];
    top = std::max(top, log_joint[c]);
  }
  // Hypotheses below e^-40 (4e-18) of the most probable one are left out of the predictives:
  // the context has ruled them out so firmly that no target drawn from the same function moves
  // the mixture through them (and each costs an Nc x Nt solve, Nt x Nt for the joint). Only the
  // kept ones are factorised again, now keeping their factors.
  std::vector<double> kept_log_mass;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (!(log_joint[c] > top - 40.0)) continue;
    out.kernels.push_back(cell_kernel(hypotheses.prior, cells[c]));
    out.family.push_back(cells[c].family);
    out.log_scale_low.push_back(cells[c].low);
    out.log_scale_high.push_back(cells[c].high);
    kept_log_mass.push_back(cells[c].log_mass);
  }
  auto fit = fit_context(out.kernels, noise_var, out.xc, yc);
  auto kept_joint = torch::tensor(kept_log_mass, torch::kFloat64) + fit.log_evidence;
  out.log_weights = kept_joint - torch::logsumexp(kept_joint, 0);
  out.chol = fit.chol;
  out.alpha = fit.alpha;
  return out;
}

std::vector<GpBayesPosterior> gp_bayes_posteriors(const GpHypotheses& hypotheses,
                                                  const Task& task) {
  validate_task(task);
  std::vector<GpBayesPosterior> out;
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    out.push_back(gp_bayes_posterior(hypotheses, task.xc[b], task.yc[b]));
  }
  return out;
}

GpHypothesisPredictives gp_hypothesis_predictives(const GpBayesPosterior& posterior,
                                                  const torch::Tensor& xt_in, int64_t dim_y,
                                                  bool with_covariance) {
  const auto xt = xt_in.to(torch::kCPU, torch::kFloat64);
  const auto nt = xt.size(0);
  const double noise_var = posterior.noise_std * posterior.noise_std;
  const auto opts = xt.options();
  const auto num_h = static_cast<int64_t>(posterior.kernels.size());
  GpHypothesisPredictives out;
  out.kernels = posterior.kernels;
  out.family = posterior.family;
  out.log_weights = posterior.log_weights;
  auto prior_var = prior_variances(out.kernels).view({num_h, 1});
  torch::Tensor v;  // L^-1 K_ct [H,Nc,Nt]
  if (!posterior.chol.defined()) {
    out.mean = torch::zeros({num_h, nt, dim_y}, opts);
    out.variance = prior_var.expand({num_h, nt}) + noise_var;
  } else {
    auto k_ct = hypothesis_kernels(out.kernels, posterior.xc, xt);  // [H,Nc,Nt]
    out.mean = k_ct.transpose(-1, -2).matmul(posterior.alpha);      // [H,Nt,Dy]
    v = torch::linalg_solve_triangular(posterior.chol, k_ct, /*upper=*/false);
    out.variance = (prior_var - v.square().sum(-2)).clamp_min(0.0) + noise_var;
  }
  if (with_covariance) {
    auto cov = hypothesis_kernels(out.kernels, xt, xt);
    if (v.defined()) cov = cov - v.transpose(-1, -2).matmul(v);
    out.covariance = cov + noise_var * torch::eye(nt, opts);
  }
  return out;
}

GpHypothesisPredictives gp_hypothesis_predictives(const GpHypotheses& hypotheses, const Task& task,
                                                  int64_t b, bool with_covariance) {
  check_task_index(task, b);
  return gp_hypothesis_predictives(gp_bayes_posterior(hypotheses, task.xc[b], task.yc[b]),
                                   task.xt[b], task.dim_y(), with_covariance);
}

Prediction gp_bayes_predict(const std::vector<GpBayesPosterior>& posteriors, const Task& task) {
  check_posteriors(posteriors, task);
  std::vector<torch::Tensor> means, stddevs;
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    auto p = gp_hypothesis_predictives(posteriors[size_t(b)], task.xt[b], task.dim_y());
    auto w = p.log_weights.exp().view({-1, 1, 1});  // [H,1,1]
    auto mean = (w * p.mean).sum(0);                // [Nt,Dy]
    auto second = (w * (p.variance.unsqueeze(-1) + p.mean.square())).sum(0);
    // The mixture's variance is at least the smallest hypothesis variance (>= noise), so the
    // clamp only guards against rounding.
    means.push_back(mean);
    stddevs.push_back((second - mean.square()).clamp_min(1e-12).sqrt());
  }
  const auto dtype = task.xt.scalar_type();
  return {torch::stack(means).to(dtype), torch::stack(stddevs).to(dtype)};
}

torch::Tensor gp_bayes_marginal_log_likelihood(const std::vector<GpBayesPosterior>& posteriors,
                                               const Task& task) {
  validate_task(task, /*require_target_outputs=*/true);
  check_posteriors(posteriors, task);
  auto result = torch::zeros({task.batch_size()}, torch::kFloat64);
  if (task.num_targets() == 0) return result;
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    auto p = gp_hypothesis_predictives(posteriors[size_t(b)], task.xt[b], task.dim_y());
    auto y = task.yt[b].to(torch::kCPU, torch::kFloat64).unsqueeze(0);  // [1,Nt,Dy]
    auto var = p.variance.unsqueeze(-1);                                // [H,Nt,1]
    // log N(y_i | h) for the vector of outputs at target i, then the mixture over h.
    auto log_density =
        (-0.5 * (y - p.mean).square() / var - 0.5 * var.log() - 0.5 * kLog2Pi).sum(-1);  // [H,Nt]
    auto per_target = torch::logsumexp(log_density + p.log_weights.unsqueeze(-1), 0);
    result[b] = per_target.mean();
  }
  return result;
}

torch::Tensor gp_bayes_joint_log_likelihood(const std::vector<GpBayesPosterior>& posteriors,
                                            const Task& task) {
  validate_task(task, /*require_target_outputs=*/true);
  check_posteriors(posteriors, task);
  check_joint_size(task.num_targets(), task.dim_y(), "gp-bayes");
  auto result = torch::zeros({task.batch_size()}, torch::kFloat64);
  const auto nt = task.num_targets();
  if (nt == 0) return result;
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    auto p = gp_hypothesis_predictives(posteriors[size_t(b)], task.xt[b], task.dim_y(),
                                       /*with_covariance=*/true);
    auto chol = jittered_cholesky(p.covariance);                        // [H,Nt,Nt]
    auto y = task.yt[b].to(torch::kCPU, torch::kFloat64).unsqueeze(0);  // [1,Nt,Dy]
    auto whitened = torch::linalg_solve_triangular(chol, y - p.mean, /*upper=*/false);
    const auto dim_y = double(task.dim_y());
    auto log_density = -0.5 * whitened.square().sum({-1, -2}) -
                       dim_y * chol.diagonal(0, -2, -1).log().sum(-1) -
                       0.5 * double(nt) * dim_y * kLog2Pi;  // [H]
    result[b] = torch::logsumexp(log_density + p.log_weights, 0) / double(nt);
  }
  return result;
}

torch::Tensor gp_bayes_sample(const std::vector<GpBayesPosterior>& posteriors, const Task& task,
                              int64_t count, torch::Generator generator) {
  check_posteriors(posteriors, task);
  if (count < 1) throw InvalidInputError("the number of samples must be >= 1");
  check_joint_size(task.num_targets(), task.dim_y(), "gp-bayes");
  const auto nt = task.num_targets(), dim_y = task.dim_y();
  auto out = torch::zeros({count, task.batch_size(), nt, dim_y}, torch::kFloat64);
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    const auto& posterior = posteriors[size_t(b)];
    auto weights = posterior.log_weights.exp();
    auto drawn = torch::multinomial(weights, count, /*replacement=*/true, generator);
    // One joint posterior per distinct hypothesis drawn, not per hypothesis of the prior.
    std::map<int64_t, JointGaussian> joints;
    for (int64_t s = 0; s < count; ++s) {
      const auto h = drawn[s].item<int64_t>();
      auto it = joints.find(h);
      if (it == joints.end()) {
        auto p = gp_posterior_joint(posterior.kernels[h], posterior.noise_std, task.xc[b],
                                    task.yc[b], task.xt[b].to(torch::kFloat64));
        it = joints
                 .emplace(h, joint_gaussian_from_covariance(p.mean.unsqueeze(0),
                                                            p.covariance.unsqueeze(0)))
                 .first;
      }
      out[s][b] = it->second.sample(1, generator)[0][0].to(torch::kFloat64);
    }
  }
  return out;
}

torch::Tensor gp_bayes_covariance(const std::vector<GpBayesPosterior>& posteriors,
                                  const Task& task) {
  check_posteriors(posteriors, task);
  check_joint_size(task.num_targets(), task.dim_y(), "gp-bayes");
  const auto nt = task.num_targets(), dim_y = task.dim_y();
  const auto n = nt * dim_y;
  std::vector<torch::Tensor> covariances;
  for (int64_t b = 0; b < task.batch_size(); ++b) {
    auto p = gp_hypothesis_predictives(posteriors[size_t(b)], task.xt[b], task.dim_y());
    const double p_noise_std = posteriors[size_t(b)].noise_std;
    auto weights = p.log_weights.exp();
    auto mean = torch::zeros({n, 1}, torch::kFloat64);
    auto second = torch::zeros({n, n}, torch::kFloat64);
    // Hypotheses below 1e-12 of the weight are left out (their total mass is below 1e-9 for
    // any grid of fewer than 1,000 hypotheses): each needs an N x N covariance of its own.
    auto kept = torch::nonzero(weights > 1e-12).view({-1});
    double kept_mass = 0.0;
    for (int64_t i = 0; i < kept.size(0); ++i) {
      const auto h = kept[i].item<int64_t>();
      const double w = weights[h].item<double>();
      auto joint = gp_posterior_joint(p.kernels[h], p_noise_std, task.xc[b], task.yc[b],
                                      task.xt[b].to(torch::kFloat64));
      auto m = joint.mean.to(torch::kFloat64).reshape({n, 1});
      mean += w * m;
      second += w * (joint.covariance + m.matmul(m.transpose(0, 1)));
      kept_mass += w;
    }
    mean /= kept_mass;
    second /= kept_mass;
    covariances.push_back(second - mean.matmul(mean.transpose(0, 1)));
  }
  return torch::stack(covariances);
}

double gp_bayes_scale_entropy(const GpBayesPosterior& posterior, int64_t family) {
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  auto weights = posterior.log_weights.to(torch::kFloat64).contiguous();
  const double* w = weights.data_ptr<double>();
  double total = 0.0, sum = 0.0;  // sum of m log(m / width) over the family's cells
  for (size_t h = 0; h < posterior.family.size(); ++h) {
    if (posterior.family[h] != family) continue;
    const double mass = std::exp(w[h]);
    if (mass <= 0.0) continue;
    const double width = posterior.log_scale_high[h] - posterior.log_scale_low[h];
    if (!(width > 0.0)) return nan;
    total += mass;
    sum += mass * (w[h] - std::log(width));
  }
  if (!(total > 0.0)) return nan;
  // With p = m / total: -sum p log(p / width) = log(total) - sum / total.
  return std::log(total) - sum / total;
}

KernelPosterior gp_bayes_kernel_posterior(const GpBayesPosterior& posterior,
                                          const GpTaskConfig& prior, int64_t bins) {
  if (bins < 1) throw ConfigError("gp-bayes: the scale posterior needs at least one bin");
  KernelPosterior out;
  out.scale_low = prior.min_lengthscale;
  out.scale_high = prior.max_lengthscale;
  const double lo = std::log(prior.min_lengthscale), hi = std::log(prior.max_lengthscale);
  // A prior of one scale (min = max) is one bin holding everything.
  const double bin_width = hi > lo ? (hi - lo) / double(bins) : 0.0;
  for (auto kind : prior.kernels) {
    KernelFamilyPosterior family;
    family.kind = kind;
    family.scale_mass.assign(size_t(bins), 0.0);
    out.families.push_back(std::move(family));
  }
  auto weights = posterior.log_weights.to(torch::kFloat64).contiguous();
  const double* w = weights.data_ptr<double>();
  // Each family's cells, for its median: (low, high, mass).
  std::vector<std::vector<std::array<double, 3>>> cells(out.families.size());
  for (size_t h = 0; h < posterior.family.size(); ++h) {
    auto& family = out.families[size_t(posterior.family[h])];
    const double mass = std::exp(w[h]);
    family.probability += mass;
    const double low = posterior.log_scale_low[h], high = posterior.log_scale_high[h];
    cells[size_t(posterior.family[h])].push_back({low, high, mass});
    if (bin_width == 0.0 || high <= low) {
      const auto bin = bin_width == 0.0 ? 0 : int64_t(std::floor((low - lo) / bin_width));
      family.scale_mass[size_t(std::clamp<int64_t>(bin, 0, bins - 1))] += mass;
      continue;
    }
    // The cell's mass, spread evenly over [low, high], into the bins it overlaps.
    const auto first =
        std::clamp<int64_t>(int64_t(std::floor((low - lo) / bin_width)), 0, bins - 1);
    const auto last =
        std::clamp<int64_t>(int64_t(std::floor((high - lo) / bin_width)), 0, bins - 1);
    for (auto bin = first; bin <= last; ++bin) {
      const double overlap = std::min(high, lo + double(bin + 1) * bin_width) -
                             std::max(low, lo + double(bin) * bin_width);
      if (overlap > 0.0) family.scale_mass[size_t(bin)] += mass * overlap / (high - low);
    }
  }
  for (size_t f = 0; f < out.families.size(); ++f) {
    auto& family = out.families[f];
    auto& own = cells[f];
    if (!(family.probability > 0.0)) {
      family.median_scale = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    std::sort(own.begin(), own.end());
    // The log ell where the family's cumulative mass reaches half, within the cell that holds it.
    double below = 0.0, median = own.back()[1];
    for (const auto& [low, high, mass] : own) {
      if (below + mass >= 0.5 * family.probability) {
        const double fraction = mass > 0.0 ? (0.5 * family.probability - below) / mass : 0.5;
        median = low + fraction * (high - low);
        break;
      }
      below += mass;
    }
    family.median_scale = std::exp(median);
  }
  return out;
}

std::vector<double> gp_bayes_family_posterior(const GpHypotheses& hypotheses, const Task& task,
                                              int64_t b) {
  check_task_index(task, b);
  validate_task(task);
  const auto kernels = gp_bayes_kernel_posterior(
      gp_bayes_posterior(hypotheses, task.xc[b], task.yc[b]), hypotheses.prior, 1);
  std::vector<double> families;
  for (const auto& family : kernels.families) families.push_back(family.probability);
  return families;
}

Prediction gp_bayes_predict(const GpHypotheses& hypotheses, const Task& task) {
  return gp_bayes_predict(gp_bayes_posteriors(hypotheses, task), task);
}

torch::Tensor gp_bayes_marginal_log_likelihood(const GpHypotheses& hypotheses, const Task& task) {
  return gp_bayes_marginal_log_likelihood(gp_bayes_posteriors(hypotheses, task), task);
}

torch::Tensor gp_bayes_joint_log_likelihood(const GpHypotheses& hypotheses, const Task& task) {
  return gp_bayes_joint_log_likelihood(gp_bayes_posteriors(hypotheses, task), task);
}

}  // namespace npe
