#include "npe/training/gap_decomposition.h"

#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/ground/prediction.h"

namespace npe {
namespace {

// Mean over targets of the log-density summed over outputs, per task: [B] float64.
torch::Tensor per_task(const torch::Tensor& y, const torch::Tensor& mean,
                       const torch::Tensor& stddev) {
  return gaussian_log_density(y, mean, stddev).sum(-1).mean(-1);
}

Prediction in_float64(const Prediction& p) {
  return {p.mean.to(torch::kCPU, torch::kFloat64), p.stddev.to(torch::kCPU, torch::kFloat64)};
}

void require_finite(const Prediction& p, const std::string& who) {
  if (!torch::isfinite(p.mean).all().item<bool>() || !torch::isfinite(p.stddev).all().item<bool>())
    throw InvalidInputError("gap decomposition: " + who + " predicted a non-finite value");
}

}  // namespace

std::vector<std::vector<TaskGap>> decompose_gaps(const std::vector<Predictor*>& models,
                                                 Predictor& reference, const TaskSource& source,
                                                 const EvalOptions& options,
                                                 const TaskCovariate& task_covariate,
                                                 const ProgressCallback& progress) {
  if (options.num_tasks < 1) throw ConfigError("gap decomposition needs at least one task");
  if (options.batch_size < 1) throw ConfigError("batch size must be >= 1");
  torch::NoGradGuard no_grad;
  std::vector<std::vector<TaskGap>> result(models.size());
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  int64_t done = 0;
  for (int64_t index = 0; done < options.num_tasks; ++index) {
    const auto size = std::min(options.batch_size, options.num_tasks - done);
    const auto batch = source.sample(size, derive_seed(options.seed, options.stream, index),
                                     options.shift, options.split);
    if (batch.task.num_targets() == 0)
      throw ConfigError("gap decomposition: a task has no targets");
    const auto y = batch.task.yt.to(torch::kCPU, torch::kFloat64);
    const auto ref = in_float64(reference.predict(batch));
    require_finite(ref, reference.info().name);
    const auto ll_reference = per_task(y, ref.mean, ref.stddev);
    std::vector<std::string> kinds;
    std::vector<double> scales, covariates;
    if (batch.oracle) {
      kinds = batch.oracle->task_kinds();
      scales = batch.oracle->task_scales();
    }
    if (task_covariate) covariates = task_covariate(batch);
    if (!covariates.empty() && int64_t(covariates.size()) != size)
      throw ConfigError("gap decomposition: the task covariate gives a value per task");
    for (size_t m = 0; m < models.size(); ++m) {
      const auto own = in_float64(models[m]->predict(batch));
      require_finite(own, models[m]->info().name);
      const auto ll_model = per_task(y, own.mean, own.stddev);
      const auto ll_swapped = per_task(y, own.mean, ref.stddev);
      for (int64_t b = 0; b < size; ++b) {
        TaskGap g;
        g.kind = size_t(b) < kinds.size() ? kinds[size_t(b)] : std::string();
        g.scale = size_t(b) < scales.size() ? scales[size_t(b)] : nan;
        g.num_context = batch.task.num_context();
        g.covariate = covariates.empty() ? nan : covariates[size_t(b)];
        const auto r = ll_reference[b].item<double>(), s = ll_swapped[b].item<double>(),
                   o = ll_model[b].item<double>();
        g.gap = r - o;
        g.mean_part = r - s;
        g.spread_part = s - o;
        result[m].push_back(g);
      }
    }
    done += size;
    if (progress && !progress({done, options.num_tasks, "decomposing"})) break;
  }
  return result;
}

GapSummary summarise_gaps(const std::vector<TaskGap>& gaps,
                          const std::function<bool(const TaskGap&)>& keep) {
  GapSummary s;
  double sums[3] = {0, 0, 0}, squares[3] = {0, 0, 0};
  for (const auto& g : gaps) {
    if (keep && !keep(g)) continue;
    const double v[3] = {g.gap, g.mean_part, g.spread_part};
    for (int i = 0; i < 3; ++i) {
      sums[i] += v[i];
      squares[i] += v[i] * v[i];
    }
    ++s.num_tasks;
  }
  if (s.num_tasks == 0) return s;
  const double n = double(s.num_tasks);
  double means[3], errors[3];
  for (int i = 0; i < 3; ++i) {
    means[i] = sums[i] / n;
    const double variance = n > 1 ? std::max(0.0, (squares[i] - n * means[i] * means[i]) / (n - 1))
                                  : std::numeric_limits<double>::quiet_NaN();
    errors[i] = std::sqrt(variance / n);
  }
  s.gap = means[0];
  s.gap_stderr = errors[0];
  s.mean_part = means[1];
  s.mean_part_stderr = errors[1];
  s.spread_part = means[2];
  s.spread_part_stderr = errors[2];
  return s;
}

LinearFit fit_linear(const std::vector<std::vector<double>>& predictors,
                     const std::vector<double>& y) {
  const auto n = int64_t(y.size()), k = int64_t(predictors.size());
  if (n < k + 2) throw ConfigError("least squares: needs at least two more points than predictors");
  auto options = torch::TensorOptions().dtype(torch::kFloat64);
  auto x = torch::ones({n, k + 1}, options);
  for (int64_t j = 0; j < k; ++j) {
    if (int64_t(predictors[size_t(j)].size()) != n)
      throw ConfigError("least squares: a predictor's length differs from the points'");
    x.select(1, j + 1).copy_(torch::tensor(predictors[size_t(j)], options));
  }
  const auto target = torch::tensor(y, options).unsqueeze(1);
  // A predictor without spread, or one that is a combination of others, leaves X'X singular:
  // the standardised predictors' correlation matrix then has an eigenvalue of (nearly) zero.
  if (k > 0) {
    auto z = x.narrow(1, 1, k);
    const auto spread = z.std(0);
    if (!(spread.min().item<double>() > 0.0))
      throw ConfigError("least squares: a predictor is constant");
    z = (z - z.mean(0)) / spread;
    const auto correlation = z.t().matmul(z) / double(n - 1);
    if (!(torch::linalg_eigvalsh(correlation).min().item<double>() > 1e-10))
      throw ConfigError("least squares: the predictors are collinear");
  }
  const auto gram = x.t().matmul(x);
  const auto inverse = torch::inverse(gram);
  const auto beta = inverse.matmul(x.t().matmul(target));
  const auto residual = target - x.matmul(beta);
  const double rss = residual.pow(2).sum().item<double>();
  const double tss = (target - target.mean()).pow(2).sum().item<double>();
  const double noise = rss / double(n - k - 1);
  LinearFit fit;
  fit.points = n;
  const auto variances = inverse.diagonal() * noise;
  for (int64_t j = 0; j <= k; ++j) {
    fit.coefficients.push_back(beta[j][0].item<double>());
    fit.stderrs.push_back(std::sqrt(std::max(0.0, variances[j].item<double>())));
  }
  fit.r_squared = tss > 0.0 ? 1.0 - rss / tss : 0.0;
  return fit;
}

}  // namespace npe
