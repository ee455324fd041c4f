#include "reference_workload.h"

#include <cmath>

#include <torch/torch.h>

#include "stopwatch.h"

namespace npe::cli {

ModelConfig reference_model_config(const std::string& kind) {
  auto config = default_model_config(kind, "paper");
  // The reference TE-TNP config (tetnp.yml) uses the rho MLP only and one attention layer per
  // block for both the context's self-attention and the targets' cross-attention.
  if (auto* te = config.find_options<TeAttentionOptions>()) te->update_locations = false;
  if (auto* sharing = config.find_options<LayerSharingOptions>())
    sharing->share_layer_weights = true;
  return config;
}

Task reference_tasks(int64_t batch, int64_t num_context, int64_t num_targets, uint64_t seed) {
  auto generator = at::detail::createCPUGenerator(seed);
  auto uniform = [&](int64_t n, double low, double high) {
    return low + (high - low) * torch::rand({batch, n, 1}, generator);
  };
  const auto phase = 2.0 * M_PI * torch::rand({batch, 1, 1}, generator);
  auto f = [&](const torch::Tensor& x) {
    return torch::sin(2.0 * x + phase) + 0.1 * torch::randn(x.sizes(), generator);
  };
  Task task;
  task.xc = uniform(num_context, -2.0, 2.0);
  task.xt = uniform(num_targets, -4.0, 4.0);
  task.yc = f(task.xc);
  task.yt = f(task.xt);
  return task;
}

std::vector<double> time_reference_training(NeuralProcessImpl& model,
                                            const ReferenceWorkload& workload, int64_t steps,
                                            int64_t warmup) {
  model.train();
  torch::optim::AdamW optimiser(model.parameters(),
                                torch::optim::AdamWOptions(workload.learning_rate));
  // The tasks are drawn on the CPU (the same numbers on every device) and timed where the model is.
  const auto device = model.parameters().front().device();
  std::vector<Task> batches;
  for (uint64_t i = 0; i < 4; ++i) {
    batches.push_back(reference_tasks(workload.train_batch, workload.train_context,
                                      workload.train_targets, 100 + i)
                          .to(device));
  }
  auto step = [&](const Task& task) {
    optimiser.zero_grad();
    auto loss = -model.log_likelihood(task).mean();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model.parameters(), workload.gradient_norm_clip);
    optimiser.step();
    return loss.item<double>();
  };
  for (int64_t i = 0; i < warmup; ++i) step(batches[i % batches.size()]);
  std::vector<double> ms;
  for (int64_t i = 0; i < steps; ++i) {
    const auto start = Clock::now();
    const double loss = step(batches[i % batches.size()]);
    ms.push_back(1000.0 * seconds_since(start));
    if (!std::isfinite(loss)) throw std::runtime_error("training loss became non-finite");
  }
  return ms;
}

std::vector<double> time_reference_prediction(NeuralProcessImpl& model,
                                              const ReferenceWorkload& workload, int64_t repeats,
                                              int64_t warmup) {
  model.eval();
  torch::NoGradGuard no_grad;
  const auto task =
      reference_tasks(1, workload.predict_context, workload.predict_targets, /*seed=*/7)
          .to(model.parameters().front().device());
  for (int64_t i = 0; i < warmup; ++i) model.predict(task);
  std::vector<double> ms;
  for (int64_t i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    model.predict(task);
    ms.push_back(1000.0 * seconds_since(start));
  }
  return ms;
}

}  // namespace npe::cli
