// npe bench latency: one prediction per model, timed.

#include "latency_bench.h"

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

struct LatencyArguments {
  int64_t repeats = 50, warmup = 5, context = 64, targets = 256;
  // Whether --context / --targets were given: a task other than gp1d keeps its own counts
  // where they were not.
  bool context_given = false, targets_given = false;
  std::string task = "gp1d";
  std::vector<std::string> task_options;
  std::string models, device = "all", workload = "tasks";
  std::optional<std::string> models_dir, size;
  std::vector<std::string> model_files;
  int fit_iterations = 60;
  RuntimeArguments runtime;
  bool json = false;
};

// One task of batch 1 to time. gp1d: a GP task of exactly --context and --targets points (the
// 1-D tab's workload). Any other task: one test task of that source (the tab's own kind of data,
// any D_x and D_y) with --context context points and --targets targets taken from its points,
// context first, so that a prediction is timed as a tab calls it (the images tab: 10 % of the
// 56 x 56 canvas as context, every pixel a target).
TaskBatch latency_batch(const LatencyArguments& a) {
  if (a.task == "gp1d" && a.task_options.empty()) {
    GpTaskConfig config;
    config.min_num_context = config.max_num_context = a.context;
    config.num_targets = a.targets;
    return GpTaskGenerator(config).sample(1, 1234);
  }
  const auto source = make_task_source(a.task, parse_key_values(a.task_options, "--task-option"));
  const auto drawn = source->sample(1, 1234, {}, Split::Test).task;
  const auto num_context = a.context_given ? a.context : drawn.num_context();
  const auto num_targets = a.targets_given ? a.targets : drawn.num_targets();
  const auto xs = torch::cat({drawn.xc, drawn.xt}, 1);
  const auto ys = torch::cat({drawn.yc, drawn.yt}, 1);
  const auto points = xs.size(1);
  if (num_context > points || num_targets > points) {
    throw UsageError("--context/--targets: a " + a.task + " task has " + std::to_string(points) +
                     " points (context and targets together); asked for " +
                     std::to_string(num_context) + " context points and " +
                     std::to_string(num_targets) + " targets");
  }
  // No oracle: the points were regrouped.
  TaskBatch batch;
  batch.task.xc = xs.slice(1, 0, num_context).contiguous();
  batch.task.yc = ys.slice(1, 0, num_context).contiguous();
  batch.task.xt = xs.slice(1, points - num_targets).contiguous();
  batch.task.yt = ys.slice(1, points - num_targets).contiguous();
  return batch;
}

// The extent of all inputs (max - min over every dimension), as the FLOP counts of grid-based
// models take it.
double input_span(const Task& task) {
  const auto all = torch::cat({task.xc, task.xt}, 1).to(torch::kFloat64);
  if (all.numel() == 0) return 0.0;
  return (all.amax({0, 1}) - all.amin({0, 1})).max().item<double>();
}

int bench_latency(const LatencyArguments& a) {
  apply_runtime_options(a.runtime);
  const auto repeats = a.repeats;
  const auto warmup = a.warmup;
  const auto filter = parse_list(a.models);
  const auto& models_dir = a.models_dir;
  const auto& device_name = a.device;
  const auto fit_iterations = a.fit_iterations;
  // Timing does not depend on the weights: --size times fresh models of that size instead of
  // the shipped ones (e.g. the paper sizes, which are not shipped).
  const auto& size = a.size;
  const bool json = a.json;
  std::vector<torch::Device> devices;
  if (device_name == "all") {
    devices.push_back(torch::kCPU);
    if (torch::cuda::is_available()) devices.push_back(torch::kCUDA);
  } else {
    devices.push_back(parse_device(device_name));
  }
  const auto batch = latency_batch(a);
  const auto num_context = batch.task.num_context();
  const auto num_targets = batch.task.num_targets();
  const auto dim_x = batch.task.dim_x();
  std::vector<ModelConfig> configs;
  std::vector<std::filesystem::path> paths;
  if (size) {
    if (a.task != "gp1d") throw UsageError("--size times fresh 1-D models: give it without --task");
    for (const auto& info : model_infos()) {
      if (!info.on_grid) configs.push_back(default_model_config(info.kind, *size));
    }
  } else {
    for (const auto& s : bench_models(models_dir, a.task)) {
      configs.push_back(s.metadata.model);
      paths.push_back(s.path);
    }
  }

  nlohmann::json rows = nlohmann::json::array();
  for (auto device : devices) {
    std::vector<std::pair<std::string, std::function<void()>>> runs;
    // Each run's work by its own FLOP count (prediction_flops: forward_flops for neural kinds),
    // so that the table says how near the machine's matrix-multiply peak a prediction runs.
    std::vector<double> run_flops;
    const BatchShape shape{1, num_context, num_targets, input_span(batch.task)};
    auto task = batch.task.to(device);
    auto sync = [device] {
      if (device.is_cuda()) torch::cuda::synchronize();
    };
    // GP baselines are CPU code: timed once, on the CPU pass.
    std::vector<std::shared_ptr<Predictor>> baselines;
    for (const auto& info : predictor_infos()) {
      if (info.capabilities.trainable || !device.is_cpu() || !wanted(filter, info.name)) continue;
      // The baseline chosen by default for the workload's input dimension.
      if (filter.empty() && !info.capabilities.default_for_dim_x(dim_x)) continue;
      // The oracle and the GP-prior baselines know GP tasks only: the workload of another task
      // regroups its points and carries no oracle.
      if ((info.capabilities.needs_oracle || info.capabilities.needs_gp_prior) && !batch.oracle) {
        if (!filter.empty()) {
          throw UsageError("--models " + info.name + ": it needs GP tasks (gp1d), not " + a.task);
        }
        continue;
      }
      PredictorOptions options;
      options.fitted.iterations = fit_iterations;
      std::shared_ptr<Predictor> baseline = make_predictor(info.name, options);
      baselines.push_back(baseline);
      runs.push_back({info.name, [baseline, &batch] { baseline->predict(batch); }});
      run_flops.push_back(baseline->prediction_flops(shape));
    }
    std::vector<std::shared_ptr<NeuralProcessImpl>> keep;
    for (size_t i = 0; i < configs.size(); ++i) {
      // Rows of shipped checkpoints are named by file (tetnp, tetnp-paper): one kind may ship in
      // several sizes, and --models picks either.
      const auto row_name = size ? configs[i].kind : paths[i].stem().string();
      if (!wanted(filter, configs[i].kind) && !wanted(filter, row_name)) continue;
      // A task's folder may hold models of other input layouts (ERA5 with and without place
      // features): time those that fit the workload, and say which did not.
      if (configs[i].dim_x != dim_x || configs[i].dim_y != batch.task.dim_y()) {
        std::fprintf(stderr,
                     "npe bench latency: skipped %s: built for D_x = %lld, D_y = %lld; this %s "
                     "task has D_x = %lld, D_y = %lld (--task-option changes its inputs)\n",
                     row_name.c_str(), (long long)configs[i].dim_x, (long long)configs[i].dim_y,
                     a.task.c_str(), (long long)dim_x, (long long)batch.task.dim_y());
        continue;
      }
      std::shared_ptr<NeuralProcessImpl> model;
      if (size) {
        torch::manual_seed(0);
        model = make_model(configs[i]);
        model->to(device);
        model->eval();
      } else {
        model = load_checkpoint(paths[i], device).model;
      }
      keep.push_back(model);
      runs.push_back({row_name, [model, task, sync] {
                        torch::NoGradGuard no_grad;
                        model->predict(task);
                        sync();
                      }});
      run_flops.push_back(forward_flops(configs[i], shape));
    }
    // Files named with --model, through their predictor (a TorchScript model has no
    // NeuralProcessImpl; its FLOPs are unknown).
    std::vector<std::shared_ptr<Predictor>> named;
    for (const auto& file : a.model_files) {
      std::shared_ptr<Predictor> predictor = load_model_file(file, device);
      named.push_back(predictor);
      runs.push_back({std::filesystem::path(file).stem().string(), [predictor, &batch, sync] {
                        predictor->predict(batch);
                        sync();
                      }});
      run_flops.push_back(predictor->prediction_flops(shape));
    }
    // The peak at the threads the predictions run on, measured in the same run (as bench peak).
    const double peak = device.is_cuda() ? matmul_peak_gflops(device, 8192)
                                         : std::max(matmul_peak_gflops(device, 1024),
                                                    matmul_peak_gflops(device, 2048));
    TerminalProgress bar("bench latency " + describe_device(device),
                         static_cast<int64_t>(runs.size()));
    int64_t done = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
      auto& [name, run] = runs[r];
      for (int64_t i = 0; i < warmup; ++i) run();
      std::vector<double> ms;
      for (int64_t i = 0; i < repeats; ++i) {
        const auto start = Clock::now();
        run();
        ms.push_back(1e3 * seconds_since(start));
      }
      auto t = summarise(ms);
      nlohmann::json row = {{"model", name},
                            {"device", describe_device(device)},
                            {"median_ms", t.median_ms},
                            {"p10_ms", t.p10_ms},
                            {"p90_ms", t.p90_ms},
                            {"runs", repeats},
                            {"task", a.task},
                            {"context", num_context},
                            {"targets", num_targets},
                            {"threads", at::get_num_threads()},
                            {"peak_gflops", peak}};
      if (std::isfinite(run_flops[r]) && t.median_ms > 0) {
        const double gflops = run_flops[r] / (t.median_ms * 1e6);
        row["gflop"] = run_flops[r] / 1e9;
        row["gflops"] = gflops;
        row["fraction_of_peak"] = gflops / peak;
      }
      if (name == "gp-fitted") row["fit_iterations"] = fit_iterations;
      rows.push_back(row);
      bar.update(++done, name);
    }
    bar.finish();
  }
  if (json) {
    std::printf("%s\n", rows.dump().c_str());
    return 0;
  }
  std::printf("one prediction of one %s task, Nc = %lld, Nt = %lld, %lld runs after %lld warm-up\n",
              a.task.c_str(), (long long)num_context, (long long)num_targets, (long long)repeats,
              (long long)warmup);
  std::printf("%-10s %-18s %10s %10s %10s %9s %8s\n", "model", "device", "median ms", "p10 ms",
              "p90 ms", "GFLOP/s", "% peak");
  for (const auto& r : rows) {
    std::printf("%-10s %-18s %10.2f %10.2f %10.2f", r["model"].get<std::string>().c_str(),
                r["device"].get<std::string>().c_str(), r["median_ms"].get<double>(),
                r["p10_ms"].get<double>(), r["p90_ms"].get<double>());
    if (r.contains("gflops")) {
      std::printf(" %9.1f %7.1f%%", r["gflops"].get<double>(),
                  100.0 * r["fraction_of_peak"].get<double>());
    }
    std::printf("\n");
  }
  if (!rows.empty()) {
    std::printf("peak: %.1f GFLOP/s (float32 matrix products, %d threads, measured in this run)\n",
                rows.front()["peak_gflops"].get<double>(), at::get_num_threads());
  }
  return 0;
}

int bench_latency_reference(const LatencyArguments& a) {
  apply_runtime_options(a.runtime);
  const ReferenceWorkload workload;
  return bench_reference(
      a.models.empty() ? kReferenceKinds : a.models,
      parse_device(a.device == "all" ? "cpu" : a.device), a.json,
      {{"batch", 1}, {"context", workload.predict_context}, {"targets", workload.predict_targets}},
      "reference workload: one prediction, batch 1, Nc 64, Nt 256", [&](NeuralProcessImpl& model) {
        return time_reference_prediction(model, workload, a.repeats, a.warmup);
      });
}

}  // namespace

Command add_latency_bench(CLI::App& bench) {
  auto* latency = bench.add_subcommand("latency", "Time one prediction per model");
  auto lat = std::make_shared<LatencyArguments>();
  latency->add_option("--repeats", lat->repeats, "Timed runs")
      ->check(at_least(1))
      ->capture_default_str();
  auto* latency_warmup =
      latency->add_option("--warmup", lat->warmup, "Untimed runs first (reference: 10)")
          ->check(at_least(0))
          ->capture_default_str();
  latency->add_option("--context", lat->context, "Context points (--task: the task's own count)")
      ->check(at_least(0))
      ->capture_default_str()
      ->each([lat](const std::string&) { lat->context_given = true; });
  latency->add_option("--targets", lat->targets, "Target points (--task: the task's own count)")
      ->check(at_least(1))
      ->capture_default_str()
      ->each([lat](const std::string&) { lat->targets_given = true; });
  latency
      ->add_option("--task", lat->task,
                   "Task (" + task_names_text() +
                       "): time its shipped models on one of its test tasks, cut to --context "
                       "and --targets points, as a tab calls them")
      ->capture_default_str();
  latency->add_option("--task-option", lat->task_options, "KEY=VALUE setting of --task");
  latency->add_option("--models", lat->models, "Comma-separated kinds");
  auto* dir = latency->add_option("--models-dir", lat->models_dir, "Folder of checkpoints");
  latency->add_option("--model", lat->model_files,
                      "A model file to time: a checkpoint or a TorchScript model (which runs its "
                      "code); repeatable");
  latency->add_option("--size", lat->size, "Time fresh models of this size instead")
      ->check(CLI::IsMember(model_sizes()))
      ->excludes(dir);
  latency->add_option("--device", lat->device, "all, cpu, cuda or auto")
      ->check(CLI::IsMember({"all", "cpu", "cuda", "auto"}))
      ->capture_default_str();
  latency->add_option("--fit-iterations", lat->fit_iterations, "Adam iterations of fitted GPs")
      ->check(at_least(0))
      ->capture_default_str();
  latency->add_flag("--json", lat->json, "Print JSON rows");
  latency
      ->add_option("--workload", lat->workload,
                   "tasks: GP tasks of --context/--targets points; reference: the authors' "
                   "benchmark workload (batch 1, Nc 64, Nt 256, fresh paper-size models)")
      ->check(CLI::IsMember({"tasks", "reference"}))
      ->capture_default_str();
  add_runtime_options(*latency, lat->runtime);

  return {latency, [lat, latency_warmup] {
            if (lat->workload == "reference") {
              // The script's counts unless given: 50 timed runs after 10 warm-up runs.
              auto args = *lat;
              if (latency_warmup->count() == 0) args.warmup = 10;
              return bench_latency_reference(args);
            }
            return bench_latency(*lat);
          }};
}

}  // namespace npe::cli
