#include "memory_bench.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>

#include <torch/torch.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <nlohmann/json.hpp>

#include "npe/data/task_registry.h"
#include "npe/models/compute_settings.h"
#include "npe/models/model_registry.h"
#include "npe/process_memory.h"
#include "npe/runtime.h"
#include "option_values.h"
#include "reference_workload.h"

namespace npe::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct PhaseMemory {
  double seconds = 0, peak_growth_bytes = 0;
};

// Free memory the allocator still holds (earlier models, earlier phases) would otherwise be
// reused without raising the resident size and hide what the next piece of work needs.
void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// Runs `work` with the peak resident size reset first; the growth of the peak over the
// resident size before it is what the work needed at once.
PhaseMemory measure(const std::function<void()>& work) {
  release_free_memory();
  if (!reset_peak_resident_memory()) {
    throw std::runtime_error(
        "npe bench memory needs to reset the peak resident size (/proc/self/clear_refs, Linux "
        "4.0 or later)");
  }
  const auto before = process_memory();
  const auto start = std::chrono::steady_clock::now();
  work();
  PhaseMemory phase;
  phase.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  phase.peak_growth_bytes = double(process_memory().peak_resident_bytes - before.resident_bytes);
  return phase;
}

int bench_memory(const MemoryBenchArguments& a) {
  apply_runtime_options(a.runtime);
  const auto device = parse_device(a.device);
  nlohmann::json rows = nlohmann::json::array();
  std::unique_ptr<TaskSource> source;
  if (!a.task.empty()) {
    source = make_task_source(a.task, parse_key_values(a.task_options, "--task-option"));
  }
  for (const auto& kind : parse_list(a.models)) {
    torch::manual_seed(0);
    auto model = make_model(source ? default_model_config(kind, a.size, *source)
                                   : default_model_config(kind, a.size));
    model->to(device);
    const auto task = (source ? source->sample(a.batch_size, /*seed=*/0).task
                              : reference_tasks(a.batch_size, a.context, a.targets, /*seed=*/0))
                          .to(device);
    release_free_memory();
    const double baseline = double(process_memory().resident_bytes);
    const auto prediction = measure([&] {
      model->eval();
      torch::NoGradGuard no_grad;
      auto p = model->predict(task);
      if (!torch::isfinite(p.mean).all().item<bool>())
        throw std::runtime_error(kind + ": the prediction is not finite");
    });
    torch::optim::AdamW optimiser(model->parameters(), torch::optim::AdamWOptions(5e-4));
    const auto training = measure([&] {
      model->train();
      optimiser.zero_grad();
      auto loss = -model->log_likelihood(task).mean();
      loss.backward();
      optimiser.step();
      if (!std::isfinite(loss.item<double>()))
        throw std::runtime_error(kind + ": the training loss is not finite");
    });
    const auto& config = model->config();
    // One layer's attention weights from every target to every context point, as a model
    // that forms them in one piece would hold them (float32).
    const auto context = task.num_context(), targets = task.num_targets();
    const double dense = 4.0 * double(a.batch_size) *
                         double(config.options<TransformerOptions>().num_heads) * double(targets) *
                         double(context);
    rows.push_back({{"model", kind},
                    {"size", a.size},
                    {"task", source ? source->name() : std::string("reference")},
                    {"batch", a.batch_size},
                    {"context", context},
                    {"targets", targets},
                    {"te_attention", attention_implementation_name(attention_implementation())},
                    {"precision", precision_name(pairwise_precision())},
                    {"baseline_mib", baseline / kMiB},
                    {"prediction_peak_growth_mib", prediction.peak_growth_bytes / kMiB},
                    {"prediction_s", prediction.seconds},
                    {"training_peak_growth_mib", training.peak_growth_bytes / kMiB},
                    {"training_step_s", training.seconds},
                    {"dense_attention_weights_mib", dense / kMiB},
                    {"device", describe_device(device)},
                    {"libtorch", libtorch_version()}});
  }
  if (a.json) {
    std::printf("%s\n", rows.dump().c_str());
    return 0;
  }
  std::printf(
      "peak resident memory above the model and data (%s, TE attention %s, %s), batch %lld, "
      "Nc %lld, Nt %lld\n",
      describe_device(device).c_str(),
      attention_implementation_name(attention_implementation()).c_str(),
      precision_name(pairwise_precision()).c_str(), (long long)a.batch_size,
      rows.empty() ? 0LL : rows[0]["context"].get<long long>(),
      rows.empty() ? 0LL : rows[0]["targets"].get<long long>());
  std::printf("%-10s %12s %14s %12s %14s %12s %16s\n", "model", "resident MiB", "predict +MiB",
              "predict s", "train +MiB", "train s", "dense attn MiB");
  for (const auto& r : rows) {
    std::printf("%-10s %12.0f %14.0f %12.2f %14.0f %12.2f %16.0f\n",
                r["model"].get<std::string>().c_str(), r["baseline_mib"].get<double>(),
                r["prediction_peak_growth_mib"].get<double>(), r["prediction_s"].get<double>(),
                r["training_peak_growth_mib"].get<double>(), r["training_step_s"].get<double>(),
                r["dense_attention_weights_mib"].get<double>());
  }
  return 0;
}

}  // namespace

Command add_memory_bench(CLI::App& bench) {
  auto* memory = bench.add_subcommand(
      "memory", "Peak resident memory of one prediction and one training step");
  auto args = std::make_shared<MemoryBenchArguments>();
  memory->add_option("--models", args->models, "Comma-separated kinds")->capture_default_str();
  memory->add_option("--size", args->size, "Size preset of the fresh models")
      ->check(CLI::IsMember(model_sizes()))
      ->capture_default_str();
  auto* task = memory->add_option(
      "--task", args->task,
      "Draw the tasks from this task (" + task_names_text() +
          ") instead of the 1-D reference tasks; its own context and target counts");
  memory->add_option("--task-option", args->task_options, "KEY=VALUE setting of --task")
      ->needs(task);
  memory->add_option("--context", args->context, "Context points per task (reference tasks)")
      ->check(CLI::Range(int64_t{0}, int64_t{100000000}))
      ->excludes(task)
      ->capture_default_str();
  memory->add_option("--targets", args->targets, "Target points per task (reference tasks)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}))
      ->excludes(task)
      ->capture_default_str();
  memory->add_option("--batch-size", args->batch_size, "Tasks")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->capture_default_str();
  memory->add_option("--device", args->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  memory->add_flag("--json", args->json, "Print JSON rows");
  add_runtime_options(*memory, args->runtime);
  return {memory, [args] { return bench_memory(*args); }};
}

}  // namespace npe::cli
