#include "npe/training/training.h"

#include <chrono>
#include <cmath>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/seeds.h"
#include "npe/training/evaluation.h"

namespace npe {

TrainResult train_model(NeuralProcessImpl& model, const TaskSource& source,
                        const TrainOptions& options, const TrainProgressCallback& progress) {
  if (options.steps < 0) throw ConfigError("training steps must be >= 0");
  if (options.batch_size < 1) throw ConfigError("batch size must be >= 1");
  if (!(options.learning_rate > 0.0)) throw ConfigError("learning rate must be positive");
  if (options.lr_schedule != "constant" && options.lr_schedule != "cosine") {
    throw ConfigError("unknown learning-rate schedule '" + options.lr_schedule +
                      "' (known: constant, cosine)");
  }
  const bool cosine = options.lr_schedule == "cosine";
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  model.to(options.device);
  torch::optim::AdamW optimizer(
      model.parameters(),
      torch::optim::AdamWOptions(options.learning_rate).weight_decay(options.weight_decay));

  TrainResult result;
  // Validation tasks come from their own stream under a fixed seed, so every model and every
  // training seed is validated on the same tasks.
  EvalOptions validation;
  validation.num_tasks = options.validation_tasks;
  validation.batch_size = options.batch_size;
  validation.seed = 0;
  validation.stream = kValidationStream;
  validation.split = Split::Validation;
  auto validation_predictor = wrap_model(
      std::shared_ptr<NeuralProcessImpl>(&model, [](NeuralProcessImpl*) {}), options.device);
  auto validate = [&](int64_t step) {
    if (options.validation_tasks <= 0) return;
    auto eval = evaluate(*validation_predictor, source, validation);
    result.validation_ll = eval.ll_mean;
    result.validation_ll_stderr = eval.ll_stderr;
    result.validation_history.emplace_back(step, eval.ll_mean);
  };

  double loss_sum = 0.0;
  int64_t loss_count = 0;
  TrainProgress report;
  report.total_steps = options.steps;
  for (int64_t step = 1; step <= options.steps; ++step) {
    model.train();
    if (cosine) {
      const double progress = double(step - 1) / double(options.steps);
      for (auto& group : optimizer.param_groups()) {
        group.options().set_lr(options.learning_rate * 0.5 * (1.0 + std::cos(M_PI * progress)));
      }
    }
    auto batch = source.sample(options.batch_size, derive_seed(options.seed, kTrainStream, step),
                               {}, Split::Train);
    auto task = batch.task.to(options.device);
    auto prediction = model.predict(task);
    auto loss = -log_likelihood_per_task(prediction, task.yt).mean();
    const double loss_value = loss.item<double>();
    if (!std::isfinite(loss_value)) {
      throw InvalidInputError("training diverged: the loss became non-finite at step " +
                              std::to_string(step));
    }
    optimizer.zero_grad();
    loss.backward();
    for (auto& p : model.parameters()) {
      if (p.grad().defined()) p.grad().clamp_(-options.grad_clip_value, options.grad_clip_value);
    }
    optimizer.step();
    loss_sum += loss_value;
    ++loss_count;
    result.final_loss = loss_value;
    result.steps = step;
    const bool validate_now = step == options.steps || (options.validation_every > 0 &&
                                                        step % options.validation_every == 0);
    if (validate_now) validate(step);
    if (progress) {
      report.step = step;
      report.loss = loss_sum / static_cast<double>(loss_count);
      report.validation_ll = result.validation_ll;
      report.elapsed_s = elapsed();
      if (!progress(report)) {
        result.cancelled = true;
        break;
      }
      loss_sum = 0.0;
      loss_count = 0;
    }
  }
  if (options.steps == 0) validate(0);
  model.eval();
  result.wall_time_s = elapsed();
  return result;
}

}  // namespace npe
