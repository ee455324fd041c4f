#include <cstdio>

#include <torch/torch.h>

#include "arguments.h"
#include "commands.h"
#include "npe/checkpoint.h"
#include "npe/evaluation.h"
#include "npe/gp_task_generator.h"
#include "npe/model_registry.h"
#include "npe/runtime.h"
#include "terminal_progress.h"

namespace npe::cli {

int run_eval(std::vector<std::string> raw) {
  Arguments args(std::move(raw));
  const auto checkpoint = args.take("--checkpoint");
  const auto model_name = args.take("--model");
  const auto task_name = args.take("--task");
  const auto device = parse_device(args.take_or("--device", "cpu"));
  EvalOptions options;
  options.shift = args.take_double("--shift", 0.0);
  options.num_tasks = args.take_int("--tasks", 1024);
  options.seed = static_cast<uint64_t>(args.take_int("--seed", 0));
  options.batch_size = args.take_int("--batch-size", 16);
  options.device = device;
  FittedGpOptions fitted;
  fitted.iterations = static_cast<int>(args.take_int("--fit-iterations", fitted.iterations));
  const bool json = args.take_flag("--json");
  apply_runtime_options(args);
  args.finish();
  if (checkpoint.has_value() == model_name.has_value()) {
    throw UsageError(
        "eval needs exactly one of --checkpoint PATH or --model {gp-oracle,gp-fitted}");
  }
  if (options.num_tasks < 1) throw UsageError("--tasks must be >= 1");

  std::unique_ptr<TaskSource> source;
  BatchPredictor predictor;
  LoadedCheckpoint loaded;
  std::string name;
  if (checkpoint) {
    loaded = load_checkpoint(*checkpoint, device);
    source = task_source_from_json(loaded.metadata.task);
    if (task_name && *task_name != source->name()) {
      throw UsageError("checkpoint was trained on task '" + source->name() + "', not '" +
                       *task_name + "'");
    }
    predictor = model_predictor(*loaded.model, device);
    name = loaded.metadata.model.kind;
  } else {
    source = make_task_source(task_name.value_or("gp1d"));
    name = *model_name;
    if (name == "gp-oracle") {
      predictor = gp_oracle_predictor();
    } else if (name == "gp-fitted") {
      predictor = gp_fitted_predictor(fitted);
    } else {
      throw UsageError(
          "--model must be gp-oracle or gp-fitted (use --checkpoint for trained "
          "models), got '" +
          name + "'");
    }
  }
  TerminalProgress bar("eval " + name, options.num_tasks);
  auto result = evaluate(predictor, *source, options, [&](const Progress& p) {
    bar.update(p.done);
    return true;
  });
  bar.finish();
  if (json) {
    nlohmann::json out = {{"model", name},
                          {"task", source->name()},
                          {"shift", options.shift},
                          {"tasks", result.num_tasks},
                          {"seed", options.seed},
                          {"ll_mean", result.ll_mean},
                          {"ll_stderr", result.ll_stderr}};
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%s on %s, shift %g, %lld tasks (seed %llu): log-likelihood %.4f ± %.4f\n",
                name.c_str(), source->name().c_str(), options.shift, (long long)result.num_tasks,
                (unsigned long long)options.seed, result.ll_mean, result.ll_stderr);
  }
  return 0;
}

}  // namespace npe::cli
