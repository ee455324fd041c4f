// npe bench train: training steps per second and the FLOP rate.

#include "train_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <torch/torch.h>

#include "bench_common.h"
#include "commands.h"
#include "memory_bench.h"
#include "model_file.h"
#include "npe/data/era5_tasks.h"
#include "npe/data/gp_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/models/checkpoint.h"
#include "npe/models/compute_settings.h"
#include "npe/models/flops.h"
#include "npe/models/model_catalog.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"
#include "npe/seeds.h"
#include "npe/training/evaluation.h"
#include "npe/training/training.h"
#include "npe/training/training_job.h"
#include "option_values.h"
#include "peak_bench.h"
#include "reference_workload.h"
#include "stopwatch.h"
#include "terminal_progress.h"

namespace npe::cli {
namespace {

struct TrainBenchArguments {
  int64_t steps = 20, warmup = 3, batch_size = 16;
  std::string size = "small", models = "cnp,rcnp,tnp,pttnp,tetnp,tepttnp,convcnp", device = "cpu",
              task = "gp1d", workload = "tasks";
  std::vector<std::string> task_options;
  RuntimeArguments runtime;
  bool json = false;
};

int bench_train(const TrainBenchArguments& a) {
  apply_runtime_options(a.runtime, parse_device(a.device));
  const auto steps = a.steps;
  const auto warmup = a.warmup;
  const auto& size = a.size;
  const auto kinds = parse_list(a.models);
  const auto device = parse_device(a.device);
  const auto batch_size = a.batch_size;
  const auto source = make_task_source(a.task, parse_key_values(a.task_options, "--task-option"));
  const bool json = a.json;

  // The best float32 matrix product this run achieves (OpenBLAS/cuBLAS), not the vendor's
  // theoretical peak: libraries with better kernels (oneDNN convolutions) can exceed it.
  const double peak = device.is_cuda() ? matmul_peak_gflops(device, 8192)
                                       : std::max(matmul_peak_gflops(device, 1024),
                                                  matmul_peak_gflops(device, 2048));
  nlohmann::json rows = nlohmann::json::array();
  TerminalProgress bar("bench train", static_cast<int64_t>(kinds.size()));
  int64_t done = 0;
  for (const auto& kind : kinds) {
    auto config = default_model_config(kind, size, *source);
    torch::manual_seed(0);
    auto model = make_model(config);
    TrainOptions options;
    options.steps = warmup + steps;
    options.batch_size = batch_size;
    options.validation_tasks = 0;
    options.device = device;
    // Without warm-up the timing starts here and includes the set-up.
    auto timed_start = Clock::now();
    train_model(*model, *source, options, [&](const TrainingStatus& p) {
      if (device.is_cuda()) torch::cuda::synchronize();
      if (warmup > 0 && p.step == warmup) timed_start = Clock::now();
      return true;
    });
    const double elapsed = seconds_since(timed_start);
    // The same tasks as the timed steps (the training stream is deterministic).
    double flops = 0.0;
    for (int64_t step = warmup + 1; step <= warmup + steps; ++step) {
      auto b = source->sample(batch_size, derive_seed(options.seed, kTrainStream, step));
      auto all = torch::cat({b.task.xc, b.task.xt}, 1);
      BatchShape shape{batch_size, b.task.num_context(), b.task.num_targets(),
                       (all.max() - all.min()).item<double>()};
      flops += training_step_flops(config, shape);
    }
    const double steps_per_s = steps / elapsed;
    const double gflops = flops / elapsed / 1e9;
    rows.push_back({{"model", kind},
                    {"size", size},
                    {"steps_per_s", steps_per_s},
                    {"flops_per_step", flops / steps},
                    {"gflops", gflops},
                    {"peak_gflops", peak},
                    {"fraction_of_peak", gflops / peak},
                    {"batch", batch_size},
                    {"task", source->name()},
                    {"machine", machine_json(device)}});
    bar.update(++done, kind);
  }
  bar.finish();
  if (json) {
    std::printf("%s\n", rows.dump().c_str());
    return 0;
  }
  std::printf(
      "training steps on %s, batch %lld, %s size, %s; "
      "measured matmul peak %.1f GFLOP/s\n",
      source->name().c_str(), (long long)batch_size, size.c_str(), describe_device(device).c_str(),
      peak);
  std::printf("%-10s %10s %16s %10s %8s\n", "model", "steps/s", "GFLOP/step", "GFLOP/s", "% peak");
  for (const auto& r : rows) {
    std::printf("%-10s %10.2f %16.3f %10.2f %7.1f%%\n", r["model"].get<std::string>().c_str(),
                r["steps_per_s"].get<double>(), r["flops_per_step"].get<double>() / 1e9,
                r["gflops"].get<double>(), 100.0 * r["fraction_of_peak"].get<double>());
  }
  return 0;
}

int bench_train_reference(const TrainBenchArguments& a) {
  apply_runtime_options(a.runtime, parse_device(a.device));
  const ReferenceWorkload workload;
  return bench_reference(a.models, parse_device(a.device), a.json,
                         {{"batch", workload.train_batch},
                          {"context", workload.train_context},
                          {"targets", workload.train_targets}},
                         "reference workload: one training step, batch 16, Nc 64, Nt 128",
                         [&](NeuralProcessImpl& model) {
                           return time_reference_training(model, workload, a.steps, a.warmup);
                         });
}

}  // namespace

Command add_train_bench(CLI::App& bench) {
  auto* train = bench.add_subcommand("train", "Training steps per second and FLOP rate");
  auto tr = std::make_shared<TrainBenchArguments>();
  train->add_option("--task", tr->task, "Task: " + task_names_text())->capture_default_str();
  train->add_option("--task-option", tr->task_options, "KEY=VALUE setting of the task");
  auto* train_steps = train->add_option("--steps", tr->steps, "Timed steps (reference: 30)")
                          ->check(at_least(1))
                          ->capture_default_str();
  auto* train_warmup =
      train->add_option("--warmup", tr->warmup, "Untimed steps first (reference: 5)")
          ->check(at_least(0))
          ->capture_default_str();
  train->add_option("--size", tr->size, "Size preset")
      ->check(CLI::IsMember(model_sizes()))
      ->capture_default_str();
  auto* train_models =
      train->add_option("--models", tr->models, "Comma-separated kinds (reference: tnp,tetnp)")
          ->capture_default_str();
  train->add_option("--device", tr->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  train->add_option("--batch-size", tr->batch_size, "Tasks per step")
      ->check(CLI::Range(int64_t{1}, kMaxBatchSize))
      ->capture_default_str();
  train->add_flag("--json", tr->json, "Print JSON rows");
  train
      ->add_option("--workload", tr->workload,
                   "tasks: the task's own batches; reference: the authors' benchmark workload "
                   "(batch 16, Nc 64, Nt 128, paper-size models, norm clipping, AdamW)")
      ->check(CLI::IsMember({"tasks", "reference"}))
      ->capture_default_str();
  add_runtime_options(*train, tr->runtime);

  return {train, [tr, train_steps, train_warmup, train_models] {
            if (tr->workload == "reference") {
              // The script's counts and models unless given: 30 steps after 5 warm-up ones.
              auto args = *tr;
              if (train_steps->count() == 0) args.steps = 30;
              if (train_warmup->count() == 0) args.warmup = 5;
              if (train_models->count() == 0) args.models = kReferenceKinds;
              return bench_train_reference(args);
            }
            return bench_train(*tr);
          }};
}

}  // namespace npe::cli
