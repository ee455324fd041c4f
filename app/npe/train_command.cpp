#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <torch/torch.h>

#include "commands.h"
#include "npe/data/task_registry.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "npe/runtime.h"
#include "npe/training/training.h"
#include "option_values.h"
#include "terminal_progress.h"

namespace npe::cli {
namespace {

std::string utc_timestamp() {
  const auto now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

}  // namespace

void add_thread_option(CLI::App& command, int& threads) {
  command.add_option("--threads", threads, "Intra-op threads (0 = all cores)")
      ->check(at_least(0))
      ->capture_default_str();
}

int apply_runtime_options(int threads) {
  configure_allocator();
  return configure_threads(threads);
}

namespace {

struct TrainArguments {
  std::string kind, out, task = "gp1d", size = "small", device = "cpu";
  std::vector<std::string> task_options, model_options;
  TrainOptions options;
  int threads = 0;
};

int run_train(const TrainArguments& a, const std::string& command_line) {
  apply_runtime_options(a.threads);
  const auto device = parse_device(a.device);
  const auto task_options = parse_key_values(a.task_options, "--task-option");
  const auto model_options = parse_key_values(a.model_options, "--model-option");
  TrainOptions options = a.options;
  options.device = device;
  const auto& kind = a.kind;
  const auto& out = a.out;
  const auto& size = a.size;
  const auto& task_name = a.task;
  auto source = make_task_source(task_name, task_options);
  auto config = default_model_config(kind, size, *source);
  if (!model_options.empty()) {
    // Overrides of single fields (e.g. num_pseudo_tokens=128), checked like a stored config.
    auto json = config.to_json();
    for (const auto& [key, value] : model_options.items()) {
      if (!json.contains(key)) throw UsageError("--model-option: no model setting '" + key + "'");
      json[key] = value;
    }
    config = ModelConfig::from_json(json);
  }
  torch::manual_seed(options.seed);
  auto model = make_model(config);
  int64_t parameters = 0;
  for (const auto& p : model->parameters()) parameters += p.numel();
  std::fprintf(stderr, "training %s (%s size, %lld parameters) on %s, %s, %lld steps\n",
               model_info(kind).display_name.c_str(), size.c_str(), (long long)parameters,
               task_name.c_str(), describe_device(device).c_str(), (long long)options.steps);

  TerminalProgress bar("train " + kind, options.steps);
  // The bar shows a running mean of the loss: single batches are too noisy to read.
  double smoothed_loss = std::nan("");
  auto result = train_model(*model, *source, options, [&](const TrainProgress& p) {
    smoothed_loss = std::isfinite(smoothed_loss) ? 0.98 * smoothed_loss + 0.02 * p.loss : p.loss;
    char details[96];
    std::snprintf(details, sizeof details, "loss %.4f  val ll %s", smoothed_loss,
                  std::isfinite(p.validation_ll) ? std::to_string(p.validation_ll).c_str() : "-");
    bar.update(p.step, details);
    return true;
  });
  bar.finish();

  CheckpointMetadata metadata;
  metadata.model = config;
  metadata.task = source->to_json();
  metadata.steps = result.steps;
  metadata.wall_time_s = result.wall_time_s;
  metadata.device = describe_device(device);
  metadata.validation_ll = result.validation_ll;
  metadata.seed = options.seed;
  metadata.size = size;
  metadata.command = command_line;
  metadata.created_at = utc_timestamp();
  metadata.libtorch_version = libtorch_version();
  model->to(torch::kCPU);
  save_checkpoint(out, *model, metadata);
  // A human-readable copy of the metadata next to the checkpoint.
  write_file_atomically(std::filesystem::path(out).string() + ".json",
                        metadata.to_json().dump(2) + "\n");
  std::printf(
      "trained %s for %lld steps in %s; validation log-likelihood %.4f ± %.4f "
      "(%lld tasks); saved %s\n",
      kind.c_str(), (long long)result.steps, format_duration(result.wall_time_s).c_str(),
      result.validation_ll, result.validation_ll_stderr, (long long)options.validation_tasks,
      out.c_str());
  return 0;
}

}  // namespace

Command add_train_command(CLI::App& app, const std::string& command_line) {
  auto* command = app.add_subcommand("train", "Train a model and write a checkpoint");
  auto a = std::make_shared<TrainArguments>();
  command
      ->add_option("--model", a->kind,
                   "Model kind (cnp, rcnp, tnp, pttnp, tetnp, tepttnp, "
                   "convcnp, convcnp2d)")
      ->required();
  command->add_option("--out", a->out, "Checkpoint to write (metadata also to PATH.json)")
      ->required();
  command->add_option("--task", a->task, "Task: gp1d, tfmnist, tfmnist-central")
      ->capture_default_str();
  command->add_option("--task-option", a->task_options, "KEY=VALUE setting of the task");
  command->add_option("--model-option", a->model_options, "KEY=VALUE field of the model config");
  command->add_option("--size", a->size, "Size preset")
      ->check(CLI::IsMember({"small", "paper"}))
      ->capture_default_str();
  command->add_option("--device", a->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  command->add_option("--steps", a->options.steps, "Training steps")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--seed", a->options.seed, "Seed of the weights and the training tasks")
      ->capture_default_str();
  command->add_option("--batch-size", a->options.batch_size, "Tasks per step")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--lr", a->options.learning_rate, "AdamW learning rate")
      ->check(at_least(1e-12))
      ->capture_default_str();
  command
      ->add_option("--lr-schedule", a->options.lr_schedule,
                   "Learning-rate schedule: constant, or cosine decay to 0 over the steps")
      ->check(CLI::IsMember({"constant", "cosine"}))
      ->capture_default_str();
  command
      ->add_option("--val-every", a->options.validation_every,
                   "Validate every N steps (0: only at the end)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--val-tasks", a->options.validation_tasks, "Validation tasks")
      ->check(at_least(0))
      ->capture_default_str();
  add_thread_option(*command, a->threads);
  return {command, [a, command_line] { return run_train(*a, command_line); }};
}

}  // namespace npe::cli
