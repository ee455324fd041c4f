#include "npe/training/evaluation.h"

#include <cmath>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

EvalResult evaluate(Predictor& predictor, const TaskSource& source, const EvalOptions& options,
                    const ProgressCallback& progress) {
  if (options.num_tasks < 1) throw ConfigError("evaluation needs at least one task");
  if (options.batch_size < 1) throw ConfigError("batch size must be >= 1");
  translation_tensor(options.shift, source.dim_x());  // validates the shift before any work
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> per_task;
  EvalResult result;
  int64_t done = 0;
  for (int64_t index = 0; done < options.num_tasks; ++index) {
    const auto size = std::min(options.batch_size, options.num_tasks - done);
    auto batch = source.sample(size, derive_seed(options.seed, options.stream, index),
                               options.shift, options.split);
    auto prediction = predictor.predict(batch);
    auto ll = log_likelihood_per_task(prediction, batch.task.yt.to(prediction.mean.device()))
                  .to(torch::kCPU, torch::kFloat64);
    if (!torch::isfinite(ll).all().item<bool>()) {
      throw InvalidInputError("evaluation: the model produced a non-finite log-likelihood");
    }
    per_task.push_back(ll);
    done += size;
    if (progress && !progress({done, options.num_tasks, "evaluating"})) {
      result.cancelled = true;
      break;
    }
  }
  auto all = torch::cat(per_task);
  result.num_tasks = all.size(0);
  result.ll_mean = all.mean().item<double>();
  result.ll_stderr =
      result.num_tasks > 1 ? all.std().item<double>() / std::sqrt(double(result.num_tasks)) : 0.0;
  return result;
}

}  // namespace npe
