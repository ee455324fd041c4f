#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <torch/torch.h>

#include "arguments.h"
#include "commands.h"
#include "npe/data/task_registry.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "npe/runtime.h"
#include "npe/training/training.h"
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

int apply_runtime_options(Arguments& args) {
  const auto threads = args.take_int("--threads", 0);
  if (threads < 0) throw UsageError("--threads must be >= 0 (0 = all cores)");
  configure_allocator();
  return configure_threads(static_cast<int>(threads));
}

int run_train(std::vector<std::string> raw, const std::string& command_line) {
  Arguments args(std::move(raw));
  const auto kind = args.take("--model");
  const auto out = args.take("--out");
  const auto task_name = args.take_or("--task", "gp1d");
  const auto task_options = parse_key_values(args.take_all("--task-option"), "--task-option");
  const auto model_options = parse_key_values(args.take_all("--model-option"), "--model-option");
  const auto size = args.take_or("--size", "small");
  const auto device = parse_device(args.take_or("--device", "cpu"));
  TrainOptions options;
  options.steps = args.take_int("--steps", 10000);
  options.seed = static_cast<uint64_t>(args.take_int("--seed", 0));
  options.batch_size = args.take_int("--batch-size", 16);
  options.learning_rate = args.take_double("--lr", options.learning_rate);
  options.validation_every = args.take_int("--val-every", 1000);
  options.validation_tasks = args.take_int("--val-tasks", 256);
  options.device = device;
  apply_runtime_options(args);
  args.finish();
  if (!kind) throw UsageError("train needs --model KIND (see npe --help)");
  if (!out) throw UsageError("train needs --out PATH for the checkpoint");
  if (options.steps < 1) throw UsageError("--steps must be >= 1");

  auto source = make_task_source(task_name, task_options);
  auto config = default_model_config(*kind, size, *source);
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
               model_info(*kind).display_name.c_str(), size.c_str(), (long long)parameters,
               task_name.c_str(), describe_device(device).c_str(), (long long)options.steps);

  TerminalProgress bar("train " + *kind, options.steps);
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
  save_checkpoint(*out, *model, metadata);
  // A human-readable copy of the metadata next to the checkpoint.
  write_file_atomically(std::filesystem::path(*out).string() + ".json",
                        metadata.to_json().dump(2) + "\n");
  std::printf(
      "trained %s for %lld steps in %s; validation log-likelihood %.4f ± %.4f "
      "(%lld tasks); saved %s\n",
      kind->c_str(), (long long)result.steps, format_duration(result.wall_time_s).c_str(),
      result.validation_ll, result.validation_ll_stderr, (long long)options.validation_tasks,
      out->c_str());
  return 0;
}

}  // namespace npe::cli
