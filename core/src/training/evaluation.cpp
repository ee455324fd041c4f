#include "npe/training/evaluation.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

namespace {

// Weighted mean of per-batch values and its standard error over batches (the batches are the
// independent units; with equal sizes this is the sample std of the batch means / sqrt(n)).
std::pair<double, double> mean_and_stderr(const std::vector<double>& values,
                                          const std::vector<int64_t>& weights) {
  const auto n = values.size();
  double total = 0.0, sum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    total += double(weights[i]);
    sum += double(weights[i]) * values[i];
  }
  const double mean = sum / total;
  // One batch says nothing about the spread between batches.
  if (n < 2) return {mean, std::numeric_limits<double>::quiet_NaN()};
  double squares = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double d = double(weights[i]) * (values[i] - mean);
    squares += d * d;
  }
  return {mean, std::sqrt(double(n) / double(n - 1) * squares) / total};
}

// Two-sided standard normal quantile of a central interval: P(|z| <= q) = level.
double central_quantile(double level) {
  return std::sqrt(2.0) * torch::erfinv(torch::tensor(level, torch::kFloat64)).item<double>();
}

// The means and standard errors of an evaluation from its per-batch values.
void summarise_batches(EvalResult& result) {
  std::tie(result.ll_mean, result.ll_stderr) = mean_and_stderr(result.batch_ll, result.batch_tasks);
  std::tie(result.ll_joint_mean, result.ll_joint_stderr) =
      mean_and_stderr(result.batch_joint_ll, result.batch_tasks);
  if (!result.batch_mixture_ll.empty()) {
    std::tie(result.ll_mixture_mean, result.ll_mixture_stderr) =
        mean_and_stderr(result.batch_mixture_ll, result.batch_tasks);
  }
}

// The key of coverage level i in JSON ("0.5", "0.9", "0.95").
std::string coverage_key(size_t i) {
  std::ostringstream level;
  level << kCoverageLevels[i];
  return level.str();
}

}  // namespace

EvalResult evaluate(Predictor& predictor, const TaskSource& source, const EvalOptions& options,
                    const ProgressCallback& progress) {
  if (options.num_tasks < 1) throw ConfigError("evaluation needs at least one task");
  if (options.batch_size < 1) throw ConfigError("batch size must be >= 1");
  translation_tensor(options.shift, source.dim_x());  // validates the shift before any work
  torch::NoGradGuard no_grad;
  EvalResult result;
  std::array<double, 3> inside{}, quantiles{};
  for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
    quantiles[i] = central_quantile(kCoverageLevels[i]);
  }
  double outputs = 0.0;
  int64_t done = 0;
  for (int64_t index = 0; done < options.num_tasks; ++index) {
    const auto size = std::min(options.batch_size, options.num_tasks - done);
    auto batch = source.sample(size, derive_seed(options.seed, options.stream, index),
                               options.shift, options.split);
    auto prediction = predictor.predict(batch);
    auto yt = batch.task.yt.to(prediction.mean.device());
    auto ll = log_likelihood_per_task(prediction, yt).to(torch::kCPU, torch::kFloat64);
    if (!torch::isfinite(ll).all().item<bool>()) {
      throw InvalidInputError("evaluation: the model produced a non-finite log-likelihood");
    }
    result.batch_ll.push_back(ll.mean().item<double>());
    if (predictor.info().capabilities.joint) {
      auto joint_ll = predictor.joint_log_likelihood(batch);
      if (!torch::isfinite(joint_ll).all().item<bool>()) {
        throw InvalidInputError("evaluation: the model produced a non-finite joint log-likelihood");
      }
      result.batch_joint_ll.push_back(joint_ll.mean().item<double>());
    } else {
      result.batch_joint_ll.push_back(result.batch_ll.back());
    }
    auto mixture_ll = predictor.exact_marginal_log_likelihood(batch);
    if (mixture_ll.defined()) {
      if (!torch::isfinite(mixture_ll).all().item<bool>()) {
        throw InvalidInputError("evaluation: the model produced a non-finite log-likelihood");
      }
      result.batch_mixture_ll.push_back(mixture_ll.mean().item<double>());
    }
    result.batch_tasks.push_back(size);
    auto z = ((yt.to(torch::kFloat64) - prediction.mean.to(torch::kFloat64)) /
              prediction.stddev.to(torch::kFloat64))
                 .abs();
    outputs += double(z.numel());
    for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
      inside[i] += z.le(quantiles[i]).sum().item<double>();
    }
    done += size;
    if (progress && !progress({done, options.num_tasks, "evaluating"})) {
      result.cancelled = true;
      break;
    }
  }
  result.num_tasks = done;
  summarise_batches(result);
  for (size_t i = 0; i < inside.size(); ++i) {
    result.coverage[i] = outputs > 0 ? inside[i] / outputs : 0.0;
  }
  return result;
}

nlohmann::json to_json(const EvalResult& result) {
  nlohmann::json coverage = nlohmann::json::object();
  for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
    coverage[coverage_key(i)] = result.coverage[i];
  }
  nlohmann::json json = {{"ll_mean", result.ll_mean},
                         {"ll_stderr", result.ll_stderr},
                         {"ll_joint_mean", result.ll_joint_mean},
                         {"ll_joint_stderr", result.ll_joint_stderr},
                         {"stderr_over", "batches"},
                         {"tasks", result.num_tasks},
                         {"batches", result.batch_ll.size()},
                         {"coverage", coverage}};
  if (!result.batch_mixture_ll.empty()) {
    json["ll_mixture_mean"] = result.ll_mixture_mean;
    json["ll_mixture_stderr"] = result.ll_mixture_stderr;
  }
  return json;
}

nlohmann::json per_batch_json(const EvalResult& result) {
  nlohmann::json json = {
      {"ll", result.batch_ll}, {"joint_ll", result.batch_joint_ll}, {"tasks", result.batch_tasks}};
  if (!result.batch_mixture_ll.empty()) json["mixture_ll"] = result.batch_mixture_ll;
  return json;
}

EvalResult eval_result_from_json(const nlohmann::json& json) {
  auto fail = [](const std::string& why) { throw InvalidInputError("stored evaluation: " + why); };
  if (!json.is_object() || !json.contains("per_batch") || !json.at("per_batch").is_object()) {
    fail("no per_batch object (rows written by npe bench accuracy --json)");
  }
  const auto& batches = json.at("per_batch");
  auto numbers = [&](const char* key, bool required) {
    std::vector<double> values;
    if (!batches.contains(key)) {
      if (required) fail(std::string("per_batch has no \"") + key + "\"");
      return values;
    }
    const auto& array = batches.at(key);
    if (!array.is_array()) fail(std::string("per_batch.") + key + " is not an array");
    for (const auto& v : array) {
      if (!v.is_number() || !std::isfinite(v.get<double>())) {
        fail(std::string("per_batch.") + key + " holds a value that is not a finite number");
      }
      values.push_back(v.get<double>());
    }
    return values;
  };
  EvalResult result;
  result.batch_ll = numbers("ll", true);
  result.batch_joint_ll = numbers("joint_ll", true);
  result.batch_mixture_ll = numbers("mixture_ll", false);
  for (double tasks : numbers("tasks", true)) {
    if (tasks < 1 || tasks != std::floor(tasks)) fail("per_batch.tasks must be positive counts");
    result.batch_tasks.push_back(int64_t(tasks));
    result.num_tasks += int64_t(tasks);
  }
  const auto n = result.batch_tasks.size();
  if (n == 0 || result.batch_ll.size() != n || result.batch_joint_ll.size() != n ||
      (!result.batch_mixture_ll.empty() && result.batch_mixture_ll.size() != n)) {
    fail("per_batch arrays are empty or of different lengths");
  }
  summarise_batches(result);
  const auto coverage = json.value("coverage", nlohmann::json::object());
  for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
    const auto key = coverage_key(i);
    if (!coverage.is_object() || !coverage.contains(key) || !coverage.at(key).is_number()) {
      fail("no coverage at level " + key);
    }
    result.coverage[i] = coverage.at(key).get<double>();
  }
  return result;
}

namespace {

PairedDifference paired(const std::vector<double>& a, const std::vector<double>& b,
                        const EvalResult& a_result, const EvalResult& b_result) {
  const auto n = std::min(a.size(), b.size());
  if (n == 0) throw ConfigError("paired comparison: an evaluation has no batches");
  std::vector<double> differences;
  std::vector<int64_t> weights;
  PairedDifference result;
  for (size_t i = 0; i < n; ++i) {
    if (a_result.batch_tasks[i] != b_result.batch_tasks[i]) {
      throw ConfigError("paired comparison: the evaluations used different batches");
    }
    differences.push_back(a[i] - b[i]);
    weights.push_back(a_result.batch_tasks[i]);
    result.num_tasks += a_result.batch_tasks[i];
  }
  std::tie(result.mean, result.standard_error) = mean_and_stderr(differences, weights);
  return result;
}

}  // namespace

PairedDifference paired_difference(const EvalResult& a, const EvalResult& b) {
  return paired(a.batch_ll, b.batch_ll, a, b);
}

PairedDifference paired_joint_difference(const EvalResult& a, const EvalResult& b) {
  return paired(a.batch_joint_ll, b.batch_joint_ll, a, b);
}

}  // namespace npe
