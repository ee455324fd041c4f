#include <cstdio>
#include <memory>
#include <optional>

#include <torch/torch.h>

#include "baseline_options.h"
#include "commands.h"
#include "model_file.h"
#include "npe/data/era5_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"
#include "npe/training/evaluation.h"
#include "option_values.h"
#include "terminal_progress.h"

namespace npe::cli {

namespace {

struct EvalArguments {
  std::optional<std::string> checkpoint, task;
  BaselineArguments baseline;
  std::vector<std::string> task_options;
  std::string device = "cpu", split = "test";
  std::optional<std::string> shift;
  EvalOptions options;
  bool json = false;
  RuntimeArguments runtime;
};

// Whether --task-option names an ERA5 data file other than the one `trained` reads, without
// saying whole_file: then that file as a whole is the test set (Era5TaskConfig::whole_file),
// for a checkpoint (with its statistics and units) and for a baseline alike.
bool names_another_era5_file(const nlohmann::json& task_options, const Era5TaskConfig& trained) {
  return task_options.contains("data") && task_options["data"].is_string() &&
         !task_options.contains("whole_file") &&
         !trained.reads(task_options["data"].get<std::string>());
}

int run_eval(const EvalArguments& a) {
  apply_runtime_options(a.runtime);
  const auto& checkpoint = a.checkpoint;
  const auto& model_name = a.baseline.model;
  const auto& task_name = a.task;
  const auto task_options = parse_key_values(a.task_options, "--task-option");
  const auto device = parse_device(a.device);
  EvalOptions options = a.options;
  if (a.shift) {
    options.shift = parse_numbers(*a.shift, "--shift");
    validate_translation(options.shift);
  }
  const auto& split = a.split;
  const bool json = a.json;
  if (checkpoint.has_value() == model_name.has_value()) {
    throw UsageError(
        "eval needs exactly one of --checkpoint PATH or --model "
        "{gp-oracle,gp-bayes,gp-fitted,gp-se-ard}");
  }
  options.split = split == "test" ? Split::Test : Split::Validation;
  options.stream = split == "test" ? kTestStream : kValidationStream;

  std::unique_ptr<TaskSource> source;
  std::unique_ptr<Predictor> predictor;
  if (checkpoint) {
    const auto metadata = read_model_metadata(*checkpoint);
    // The checkpoint's task (with its settings), unless another task is named explicitly.
    if (task_name && *task_name != metadata.task_name()) {
      source = make_task_source(*task_name, task_options);
    } else if (!task_options.empty()) {
      auto configuration = metadata.task;
      // era5 and gridded: the kind of configuration, whatever the task was named.
      const bool era5 = metadata.task.value("kind", std::string()) == "era5";
      if (era5 && names_another_era5_file(task_options, Era5TaskConfig::from_json(metadata.task))) {
        configuration["whole_file"] = true;
      }
      // Another series file or other pictures: all of it is test data, read with the
      // checkpoint's window and standardisation or picture size (which the configuration
      // carries).
      const auto kind = configuration.value("kind", "");
      if ((kind == "series" || kind == "pictures") && task_options.contains("data") &&
          task_options["data"] != configuration["data"] && !task_options.contains("whole_file")) {
        configuration["whole_file"] = true;
      }
      for (const auto& [key, value] : task_options.items()) {
        if (!configuration.contains(key) && !(era5 && key == "whole_file")) {
          throw UsageError("--task-option: the checkpoint's task has no setting '" + key + "'");
        }
        configuration[key] = value;
      }
      source = task_source_from_json(configuration);
    } else if (metadata.task.is_null()) {
      throw UsageError("'" + *checkpoint + "' names no task it was trained on: give --task");
    } else {
      source = task_source_from_json(metadata.task);
    }
    predictor = load_model_file(*checkpoint, device);
  } else {
    // A baseline on an ERA5 file other than the default one uses that file's own statistics.
    auto options_here = task_options;
    if (task_name.value_or("gp1d") == "era5" &&
        names_another_era5_file(options_here, Era5TaskConfig{})) {
      options_here["whole_file"] = true;
    }
    source = make_task_source(task_name.value_or("gp1d"), options_here);
    predictor =
        make_predictor(*model_name, baseline_predictor_options(a.baseline, device, *source));
  }
  if (const auto* era5 = dynamic_cast<const Era5TaskSource*>(source.get())) {
    if (const auto choice = describe_variable_choice(era5->field()); !choice.empty()) {
      std::fprintf(stderr, "npe eval: %s (--task-option variable=NAME reads another)\n",
                   choice.c_str());
    }
  }
  if (const auto data = source->describe(); !data.empty()) {
    std::fprintf(stderr, "npe eval: %s\n", data.c_str());
  }
  const auto name = row_name(*predictor);
  TerminalProgress bar("eval " + name, options.num_tasks);
  auto result = evaluate(*predictor, *source, options, [&](const Progress& p) {
    bar.update(p.done);
    return true;
  });
  bar.finish();
  const auto shift_text = describe_translation(options.shift);
  if (json) {
    nlohmann::json out = to_json(result);
    out.update({{"model", name},
                {"task", source->name()},
                {"shift", options.shift.size() == 1 ? nlohmann::json(options.shift[0])
                                                    : nlohmann::json(options.shift)},
                {"split", split},
                {"batch_size", options.batch_size},
                {"seed", options.seed}});
    if (options.shift.empty()) out["shift"] = 0.0;
    if (const double log_scale = source->output_log_scale(); log_scale != 0.0) {
      out["ll_mean_data_units"] = result.ll_mean - log_scale;
    }
    if (auto kinds = ll_by_kind_json(result); !kinds.empty()) out["by_task_kind"] = kinds;
    if (!result.task_scale.empty()) {
      out["by_task_kind_and_scale"] = ll_by_kind_json(result, TaskGrouping::kind_and_scale);
    }
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%s on %s (%s), shift %s, %lld tasks (seed %llu): log-likelihood %.4f ± %.4f\n",
                name.c_str(), source->name().c_str(), split.c_str(), shift_text.c_str(),
                (long long)result.num_tasks, (unsigned long long)options.seed, result.ll_mean,
                result.ll_stderr);
    std::printf(
        "  (± standard error over %zu batches of %lld tasks: tasks in a batch share N_c)\n"
        "  targets inside the central 50%% / 90%% / 95%% predictive intervals: %.3f / %.3f / "
        "%.3f\n",
        result.batch_ll.size(), (long long)options.batch_size, result.coverage[0],
        result.coverage[1], result.coverage[2]);
    if (result.nonzero_fraction < 1.0) {
      // An image's background is exactly 0 and inside every interval of a σ floor.
      std::printf(
          "  of the %.1f%% of target outputs that are not exactly 0 (e.g. an image's garment): "
          "%.3f / %.3f / %.3f\n",
          100.0 * result.nonzero_fraction, result.coverage_nonzero[0], result.coverage_nonzero[1],
          result.coverage_nonzero[2]);
      // The mean above is mostly the zeros' where they are most of the outputs.
      std::printf(
          "  log-likelihood per output not exactly 0: %.4f ± %.4f; per output exactly 0: %.4f ± "
          "%.4f\n",
          result.ll_nonzero_mean, result.ll_nonzero_stderr, result.ll_zero_mean,
          result.ll_zero_stderr);
    }
    if (!result.batch_mixture_ll.empty()) {
      std::printf(
          "  (the log-likelihood above is the moment-matched Gaussian's; the mixture's own per "
          "target: %.4f ± %.4f)\n",
          result.ll_mixture_mean, result.ll_mixture_stderr);
    }
    if (predictor->info().capabilities.joint) {
      std::printf("  joint log-likelihood per target, log p(y_t | context) / N_t: %.4f ± %.4f\n",
                  result.ll_joint_mean, result.ll_joint_stderr);
    }
    if (const double log_scale = source->output_log_scale(); log_scale != 0.0) {
      // The same figures in the data's units: the densities of standardised outputs divided by
      // the standardisation's scales.
      std::printf("  in the data's units: log-likelihood per target %.4f ± %.4f\n",
                  result.ll_mean - log_scale, result.ll_stderr);
    }
    for (const auto& [kind, summary] : ll_by_kind(result)) {
      std::printf("  %s tasks (%lld): log-likelihood %.4f ± %.4f\n", kind.c_str(),
                  (long long)summary.num_tasks, summary.ll_mean, summary.ll_stderr);
    }
  }
  return 0;
}

}  // namespace

Command add_eval_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "eval", "Mean log-likelihood per target (± standard error) of a checkpoint or GP baseline");
  auto a = std::make_shared<EvalArguments>();
  auto* checkpoint = command->add_option("--checkpoint", a->checkpoint, "Checkpoint to evaluate");
  add_baseline_options(*command, a->baseline, checkpoint);
  command->add_option("--task", a->task,
                      "Task: " + task_names_text() + " (default: the checkpoint's, else gp1d)");
  command->add_option("--task-option", a->task_options, "KEY=VALUE setting of the task");
  add_data_option(command, a->task_options);
  command->add_option("--shift", a->shift,
                      "Translation: D (every input dimension) or D1,D2,... (one per dimension)");
  command->add_option("--tasks", a->options.num_tasks, "Number of tasks")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--seed", a->options.seed, "Test seed")->capture_default_str();
  command->add_option("--batch-size", a->options.batch_size, "Tasks per batch")
      ->check(CLI::Range(int64_t{1}, kMaxBatchSize))
      ->capture_default_str();
  command->add_option("--split", a->split, "Data split")
      ->check(CLI::IsMember({"test", "validation"}))
      ->capture_default_str();
  command->add_option("--device", a->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  command->add_flag("--json", a->json, "Print one JSON object");
  // Evaluations stay float32 unless asked: their numbers must not depend on the CPU.
  a->runtime.precision = "fp32";
  add_runtime_options(*command, a->runtime);
  return {command, [a] { return run_eval(*a); }};
}

}  // namespace npe::cli
