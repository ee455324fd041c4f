#include "npe/training/evaluation.h"

#include <algorithm>
#include <cmath>
#include <functional>
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

// Keeps each task's kind and log-likelihoods where the batch's oracle knows the kinds.
void record_task_kinds(const TaskBatch& batch, const torch::Tensor& ll,
                       const torch::Tensor& joint_ll, EvalResult& result) {
  if (!batch.oracle) return;
  const auto kinds = batch.oracle->task_kinds();
  if (kinds.empty()) return;
  TORCH_CHECK(int64_t(kinds.size()) == ll.size(0), "evaluation: the oracle names ", kinds.size(),
              " task kinds for ", ll.size(0), " tasks");
  const auto scales = batch.oracle->task_scales();
  TORCH_CHECK(scales.empty() || scales.size() == kinds.size(), "evaluation: the oracle gives ",
              scales.size(), " task scales for ", kinds.size(), " tasks");
  // A stored evaluation keeps either every task's scale or none.
  const bool keep_scales = !scales.empty() && result.task_scale.size() == result.task_kind.size();
  const auto marginal = ll.contiguous();
  const auto joint = joint_ll.contiguous();
  for (int64_t i = 0; i < ll.size(0); ++i) {
    result.task_kind.push_back(kinds[size_t(i)]);
    result.task_ll.push_back(marginal[i].item<double>());
    result.task_joint_ll.push_back(joint[i].item<double>());
    result.task_num_context.push_back(batch.task.num_context());
    if (keep_scales) result.task_scale.push_back(scales[size_t(i)]);
  }
  if (!keep_scales) result.task_scale.clear();
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
    quantiles[i] = central_interval_quantile(kCoverageLevels[i]);
  }
  double outputs = 0.0;
  std::array<double, 3> inside_nonzero{};
  double nonzero_outputs = 0.0;
  // Per batch: the mean log density of the outputs not exactly 0 and of those exactly 0, and
  // how many there were (the weights of the means over batches).
  std::vector<double> batch_nonzero_ll, batch_zero_ll;
  std::vector<int64_t> batch_nonzero_outputs, batch_zero_outputs;
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
    torch::Tensor joint_ll = ll;
    if (predictor.info().capabilities.joint) {
      joint_ll = predictor.joint_log_likelihood(batch).to(torch::kCPU, torch::kFloat64);
      if (!torch::isfinite(joint_ll).all().item<bool>()) {
        throw InvalidInputError("evaluation: the model produced a non-finite joint log-likelihood");
      }
    }
    result.batch_joint_ll.push_back(joint_ll.mean().item<double>());
    auto mixture_ll = predictor.exact_marginal_log_likelihood(batch);
    if (mixture_ll.defined()) {
      if (!torch::isfinite(mixture_ll).all().item<bool>()) {
        throw InvalidInputError("evaluation: the model produced a non-finite log-likelihood");
      }
      result.batch_mixture_ll.push_back(mixture_ll.mean().item<double>());
    }
    result.batch_tasks.push_back(size);
    record_task_kinds(batch, ll, joint_ll, result);
    auto z = ((yt.to(torch::kFloat64) - prediction.mean.to(torch::kFloat64)) /
              prediction.stddev.to(torch::kFloat64))
                 .abs();
    outputs += double(z.numel());
    const auto nonzero = yt.ne(0);
    nonzero_outputs += nonzero.sum().item<double>();
    {
      const auto density = -0.5 * z.square() - prediction.stddev.to(torch::kFloat64).log() -
                           0.5 * std::log(2.0 * M_PI);
      const auto nonzero_cpu = nonzero.to(torch::kCPU);
      const auto density_cpu = density.to(torch::kCPU);
      const auto count = nonzero_cpu.sum().item<int64_t>();
      const auto zeros = int64_t(z.numel()) - count;
      if (count > 0) {
        batch_nonzero_ll.push_back(density_cpu.masked_select(nonzero_cpu).mean().item<double>());
        batch_nonzero_outputs.push_back(count);
      }
      if (zeros > 0) {
        batch_zero_ll.push_back(
            density_cpu.masked_select(nonzero_cpu.logical_not()).mean().item<double>());
        batch_zero_outputs.push_back(zeros);
      }
    }
    for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
      const auto covered = z.le(quantiles[i]);
      inside[i] += covered.sum().item<double>();
      inside_nonzero[i] += covered.logical_and(nonzero).sum().item<double>();
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
    result.coverage_nonzero[i] = nonzero_outputs > 0 ? inside_nonzero[i] / nonzero_outputs : 0.0;
  }
  result.nonzero_fraction = outputs > 0 ? nonzero_outputs / outputs : 1.0;
  if (result.nonzero_fraction < 1.0) {
    if (!batch_nonzero_ll.empty()) {
      std::tie(result.ll_nonzero_mean, result.ll_nonzero_stderr) =
          mean_and_stderr(batch_nonzero_ll, batch_nonzero_outputs);
    }
    std::tie(result.ll_zero_mean, result.ll_zero_stderr) =
        mean_and_stderr(batch_zero_ll, batch_zero_outputs);
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
  if (result.nonzero_fraction < 1.0) {
    nlohmann::json nonzero = nlohmann::json::object();
    for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
      nonzero[coverage_key(i)] = result.coverage_nonzero[i];
    }
    json["coverage_nonzero"] = nonzero;
    json["nonzero_fraction"] = result.nonzero_fraction;
    auto number_or_null = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nullptr; };
    json["ll_nonzero_mean"] = number_or_null(result.ll_nonzero_mean);
    json["ll_nonzero_stderr"] = number_or_null(result.ll_nonzero_stderr);
    json["ll_zero_mean"] = number_or_null(result.ll_zero_mean);
    json["ll_zero_stderr"] = number_or_null(result.ll_zero_stderr);
  }
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

nlohmann::json per_task_json(const EvalResult& result) {
  if (result.task_kind.empty()) return nullptr;
  nlohmann::json json = {{"kind", result.task_kind},
                         {"ll", result.task_ll},
                         {"joint_ll", result.task_joint_ll},
                         {"num_context", result.task_num_context}};
  if (!result.task_scale.empty()) json["scale"] = result.task_scale;
  return json;
}

EvalResult eval_result_from_json(const nlohmann::json& json) {
  auto fail = [](const std::string& why) { throw InvalidInputError("stored evaluation: " + why); };
  if (!json.is_object() || !json.contains("per_batch") || !json.at("per_batch").is_object()) {
    fail("no per_batch object (rows written by npe bench accuracy --json)");
  }
  const auto& batches = json.at("per_batch");
  auto numbers_in = [&](const nlohmann::json& object, const std::string& where, const char* key,
                        bool required) {
    std::vector<double> values;
    if (!object.contains(key)) {
      if (required) fail(where + " has no \"" + key + "\"");
      return values;
    }
    const auto& array = object.at(key);
    if (!array.is_array()) fail(where + "." + key + " is not an array");
    for (const auto& v : array) {
      if (!v.is_number() || !std::isfinite(v.get<double>())) {
        fail(where + "." + key + " holds a value that is not a finite number");
      }
      values.push_back(v.get<double>());
    }
    return values;
  };
  auto numbers = [&](const char* key, bool required) {
    return numbers_in(batches, "per_batch", key, required);
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
  // Rows written before it was measured, or of data without exact zeros, have no
  // coverage_nonzero: then it is the coverage over all outputs.
  result.coverage_nonzero = result.coverage;
  if (json.contains("coverage_nonzero")) {
    const auto& nonzero = json.at("coverage_nonzero");
    const auto fraction = json.value("nonzero_fraction", nlohmann::json());
    if (!fraction.is_number() || fraction.get<double>() < 0 || fraction.get<double>() > 1) {
      fail("coverage_nonzero without a nonzero_fraction in [0, 1]");
    }
    result.nonzero_fraction = fraction.get<double>();
    for (size_t i = 0; i < kCoverageLevels.size(); ++i) {
      const auto key = coverage_key(i);
      if (!nonzero.is_object() || !nonzero.contains(key) || !nonzero.at(key).is_number()) {
        fail("no coverage_nonzero at level " + key);
      }
      result.coverage_nonzero[i] = nonzero.at(key).get<double>();
    }
    // Absent from rows written before they were measured; null where not finite.
    for (auto [key, value] : {std::pair{"ll_nonzero_mean", &result.ll_nonzero_mean},
                              {"ll_nonzero_stderr", &result.ll_nonzero_stderr},
                              {"ll_zero_mean", &result.ll_zero_mean},
                              {"ll_zero_stderr", &result.ll_zero_stderr}}) {
      if (json.contains(key) && json.at(key).is_number()) *value = json.at(key).get<double>();
    }
  }
  // Per-task values: only in rows of tasks with kinds, and only in files written since they were
  // added; without them a stored row still pairs batch by batch.
  if (json.contains("per_task") && !json.at("per_task").is_null()) {
    const auto& tasks = json.at("per_task");
    if (!tasks.is_object() || !tasks.contains("kind") || !tasks.at("kind").is_array()) {
      fail("per_task has no \"kind\" array");
    }
    for (const auto& kind : tasks.at("kind")) {
      if (!kind.is_string()) fail("per_task.kind holds a value that is not a string");
      result.task_kind.push_back(kind.get<std::string>());
    }
    result.task_ll = numbers_in(tasks, "per_task", "ll", true);
    result.task_joint_ll = numbers_in(tasks, "per_task", "joint_ll", true);
    // Files written before these were added have neither.
    for (double n : numbers_in(tasks, "per_task", "num_context", false)) {
      if (n < 0 || n != std::floor(n)) fail("per_task.num_context must be counts");
      result.task_num_context.push_back(int64_t(n));
    }
    result.task_scale = numbers_in(tasks, "per_task", "scale", false);
    auto holds_one_per_task = [&](size_t size, bool optional) {
      return size == result.task_kind.size() || (optional && size == 0);
    };
    if (int64_t(result.task_kind.size()) != result.num_tasks ||
        !holds_one_per_task(result.task_ll.size(), false) ||
        !holds_one_per_task(result.task_joint_ll.size(), false) ||
        !holds_one_per_task(result.task_num_context.size(), true) ||
        !holds_one_per_task(result.task_scale.size(), true)) {
      fail("per_task arrays do not hold one value per task");
    }
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

namespace {

// Per kind, the mean over each batch's tasks of that kind of value(task) and how many there
// were, batch by batch (batches without such a task left out), over the first `tasks` tasks.
struct KindBatches {
  std::vector<double> means;
  std::vector<int64_t> counts;
};

std::map<std::string, KindBatches> group_by_kind(const EvalResult& result, int64_t tasks,
                                                 const std::function<double(size_t)>& value,
                                                 const std::function<std::string(size_t)>& group) {
  std::map<std::string, KindBatches> groups;
  size_t first = 0;
  for (const auto batch_size : result.batch_tasks) {
    const auto end = std::min(first + size_t(batch_size), size_t(tasks));
    std::map<std::string, std::pair<double, int64_t>> sums;
    for (size_t i = first; i < end; ++i) {
      auto& [sum, count] = sums[group(i)];
      sum += value(i);
      ++count;
    }
    for (const auto& [kind, sum_count] : sums) {
      groups[kind].means.push_back(sum_count.first / double(sum_count.second));
      groups[kind].counts.push_back(sum_count.second);
    }
    first = end;
    if (first >= size_t(tasks)) break;
  }
  return groups;
}

// The group of task i: its kind, and with kind_and_scale the octave [2^k, 2^(k+1)) holding its
// scale, from `scales` (one per task, or empty: kinds only).
std::function<std::string(size_t)> task_group(const EvalResult& result,
                                              const std::vector<double>& scales,
                                              TaskGrouping grouping) {
  return [&result, &scales, grouping](size_t i) {
    const auto& kind = result.task_kind[i];
    if (grouping == TaskGrouping::kind || i >= scales.size() || !(scales[i] > 0.0)) return kind;
    const double low = std::exp2(std::floor(std::log2(scales[i])));
    std::ostringstream label;
    label << kind << " [" << low << "," << 2.0 * low << ")";
    return label.str();
  };
}

}  // namespace

std::map<std::string, KindSummary> ll_by_kind(const EvalResult& result, TaskGrouping grouping) {
  std::map<std::string, KindSummary> summaries;
  if (result.task_kind.empty()) return summaries;
  const auto groups = group_by_kind(
      result, int64_t(result.task_kind.size()), [&](size_t i) { return result.task_ll[i]; },
      task_group(result, result.task_scale, grouping));
  for (const auto& [kind, batches] : groups) {
    auto& summary = summaries[kind];
    for (const auto count : batches.counts) summary.num_tasks += count;
    std::tie(summary.ll_mean, summary.ll_stderr) = mean_and_stderr(batches.means, batches.counts);
  }
  return summaries;
}

nlohmann::json ll_by_kind_json(const EvalResult& result, TaskGrouping grouping) {
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [kind, summary] : ll_by_kind(result, grouping)) {
    kinds[kind] = {{"tasks", summary.num_tasks},
                   {"ll_mean", summary.ll_mean},
                   {"ll_stderr", summary.ll_stderr}};
  }
  return kinds;
}

std::map<std::string, PairedDifference> paired_difference_by_kind(const EvalResult& a,
                                                                  const EvalResult& b, bool joint,
                                                                  TaskGrouping grouping) {
  std::map<std::string, PairedDifference> differences;
  if (a.task_kind.empty() || b.task_kind.empty()) return differences;
  const auto batches = std::min(a.batch_tasks.size(), b.batch_tasks.size());
  int64_t tasks = 0;
  for (size_t i = 0; i < batches; ++i) {
    if (a.batch_tasks[i] != b.batch_tasks[i]) {
      throw ConfigError("paired comparison: the evaluations used different batches");
    }
    tasks += a.batch_tasks[i];
  }
  tasks = std::min({tasks, int64_t(a.task_kind.size()), int64_t(b.task_kind.size())});
  for (int64_t i = 0; i < tasks; ++i) {
    if (a.task_kind[size_t(i)] != b.task_kind[size_t(i)]) {
      throw ConfigError("paired comparison: task " + std::to_string(i) + " is a " +
                        a.task_kind[size_t(i)] + " task in one evaluation and a " +
                        b.task_kind[size_t(i)] + " task in the other");
    }
  }
  const auto& a_ll = joint ? a.task_joint_ll : a.task_ll;
  const auto& b_ll = joint ? b.task_joint_ll : b.task_ll;
  const auto& scales = a.task_scale.empty() ? b.task_scale : a.task_scale;
  const auto groups = group_by_kind(
      a, tasks, [&](size_t i) { return a_ll[i] - b_ll[i]; }, task_group(a, scales, grouping));
  for (const auto& [kind, kind_batches] : groups) {
    auto& difference = differences[kind];
    for (const auto count : kind_batches.counts) difference.num_tasks += count;
    std::tie(difference.mean, difference.standard_error) =
        mean_and_stderr(kind_batches.means, kind_batches.counts);
  }
  return differences;
}

}  // namespace npe
