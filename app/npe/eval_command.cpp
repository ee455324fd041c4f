#include <cstdio>

#include <torch/torch.h>

#include "arguments.h"
#include "commands.h"
#include "npe/data/task_registry.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"
#include "npe/training/evaluation.h"
#include "terminal_progress.h"

namespace npe::cli {

int run_eval(std::vector<std::string> raw) {
  Arguments args(std::move(raw));
  const auto checkpoint = args.take("--checkpoint");
  const auto model_name = args.take("--model");
  const auto task_name = args.take("--task");
  const auto task_options = parse_key_values(args.take_all("--task-option"), "--task-option");
  const auto device = parse_device(args.take_or("--device", "cpu"));
  EvalOptions options;
  if (auto shift = args.take("--shift")) options.shift = parse_translation(*shift, "--shift");
  options.num_tasks = args.take_int("--tasks", 1024);
  options.seed = static_cast<uint64_t>(args.take_int("--seed", 0));
  options.batch_size = args.take_int("--batch-size", 16);
  const auto split = args.take_or("--split", "test");
  PredictorOptions predictor_options;
  predictor_options.device = device;
  predictor_options.fitted.iterations =
      static_cast<int>(args.take_int("--fit-iterations", predictor_options.fitted.iterations));
  const bool json = args.take_flag("--json");
  apply_runtime_options(args);
  args.finish();
  if (checkpoint.has_value() == model_name.has_value()) {
    throw UsageError(
        "eval needs exactly one of --checkpoint PATH or --model {gp-oracle,gp-fitted,gp-se-ard}");
  }
  if (options.num_tasks < 1) throw UsageError("--tasks must be >= 1");
  if (options.batch_size < 1) throw UsageError("--batch-size must be >= 1");
  if (split != "test" && split != "validation") {
    throw UsageError("--split must be test or validation, got '" + split + "'");
  }
  options.split = split == "test" ? Split::Test : Split::Validation;
  options.stream = split == "test" ? kTestStream : kValidationStream;

  std::unique_ptr<TaskSource> source;
  std::unique_ptr<Predictor> predictor;
  if (checkpoint) {
    const auto metadata = read_checkpoint_metadata(*checkpoint);
    // The checkpoint's task (with its settings), unless another task is named explicitly.
    if (task_name && *task_name != metadata.task_name()) {
      source = make_task_source(*task_name, task_options);
    } else if (!task_options.empty()) {
      auto configuration = metadata.task;
      for (const auto& [key, value] : task_options.items()) {
        if (!configuration.contains(key)) {
          throw UsageError("--task-option: the checkpoint's task has no setting '" + key + "'");
        }
        configuration[key] = value;
      }
      source = task_source_from_json(configuration);
    } else {
      source = task_source_from_json(metadata.task);
    }
    predictor = load_predictor(*checkpoint, device);
  } else {
    if (predictor_info(*model_name).capabilities.trainable) {
      throw UsageError("--model " + *model_name +
                       " is a neural model: evaluate a trained one with --checkpoint PATH");
    }
    source = make_task_source(task_name.value_or("gp1d"), task_options);
    predictor = make_predictor(*model_name, predictor_options);
  }
  const auto name = predictor->info().name;
  TerminalProgress bar("eval " + name, options.num_tasks);
  auto result = evaluate(*predictor, *source, options, [&](const Progress& p) {
    bar.update(p.done);
    return true;
  });
  bar.finish();
  const auto shift_text = describe_translation(options.shift);
  if (json) {
    nlohmann::json out = {{"model", name},
                          {"task", source->name()},
                          {"shift", options.shift.size() == 1 ? nlohmann::json(options.shift[0])
                                                              : nlohmann::json(options.shift)},
                          {"split", split},
                          {"tasks", result.num_tasks},
                          {"seed", options.seed},
                          {"ll_mean", result.ll_mean},
                          {"ll_stderr", result.ll_stderr}};
    if (options.shift.empty()) out["shift"] = 0.0;
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%s on %s (%s), shift %s, %lld tasks (seed %llu): log-likelihood %.4f ± %.4f\n",
                name.c_str(), source->name().c_str(), split.c_str(), shift_text.c_str(),
                (long long)result.num_tasks, (unsigned long long)options.seed, result.ll_mean,
                result.ll_stderr);
  }
  return 0;
}

}  // namespace npe::cli
