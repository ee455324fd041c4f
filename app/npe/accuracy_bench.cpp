// npe bench accuracy: the mean log-likelihood of every model at each Δ, against the Bayes ceiling
// where there is one.

#include "accuracy_bench.h"

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

#include "accuracy_groups.h"
#include "bench_common.h"
#include "commands.h"
#include "memory_bench.h"
#include "model_file.h"
#include "npe/data/task_registry.h"
#include "npe/models/checkpoint.h"
#include "npe/models/compute_settings.h"
#include "npe/models/flops.h"
#include "npe/models/model_catalog.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"
#include "npe/seeds.h"
#include "npe/training/accuracy_table.h"
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

struct AccuracyArguments {
  std::string task = "gp1d", shifts = "0,0.2,0.4,0.6,0.8,1,2,3", models, device = "cpu";
  std::vector<std::string> task_options;
  std::optional<std::string> models_dir;
  /// --model: model files named one by one (checkpoints or TorchScript models).
  std::vector<std::string> model_files;
  int64_t tasks = 4096, fitted_tasks = 256;
  uint64_t seed = 0;
  int fit_iterations = 1000;
  int64_t bayes_grid = GpBayesOptions{}.grid_points;
  int64_t bayes_periodic_grid = GpBayesOptions{}.periodic_grid_points;
  RuntimeArguments runtime;
  bool json = false;
  std::optional<std::string> baselines_from;
  bool baselines_every_shift = false;
  std::string variant;  // label of the task variant being run (era5: the region)
};

int bench_accuracy_once(const AccuracyArguments& a, VariantResults* grouped = nullptr,
                        const std::string& group = {});

// Tasks with evaluation variants (the ERA5 regions and test blocks) are benched once per
// variant, unless the task options already choose one.
int bench_accuracy(const AccuracyArguments& a) {
  const auto options = parse_key_values(a.task_options, "--task-option");
  const auto variants = make_task_source(a.task, options)->evaluation_variants();
  bool chosen = false;
  for (const auto& v : variants) {
    for (const auto& [key, value] : v.overrides.items()) chosen = chosen || options.contains(key);
  }
  if (variants.empty() || chosen) return bench_accuracy_once(a);
  VariantResults grouped;
  for (const auto& v : variants) {
    auto run = a;
    for (const auto& [key, value] : v.overrides.items()) {
      run.task_options.push_back(key + "=" + value.dump());
    }
    run.variant = v.label;
    if (!a.json) std::printf("\n=== %s ===\n", v.label.c_str());
    if (int rc = bench_accuracy_once(run, &grouped, v.group)) return rc;
  }
  if (!a.json) print_group_summary(grouped, *make_task_source(a.task, options));
  return 0;
}

int bench_accuracy_once(const AccuracyArguments& a, VariantResults* grouped,
                        const std::string& group) {
  apply_runtime_options(a.runtime);
  const auto task_options = parse_key_values(a.task_options, "--task-option");
  const auto shifts = parse_numbers(a.shifts, "--shifts");
  const auto seed = a.seed;
  const auto filter = parse_list(a.models);
  const auto device = parse_device(a.device);
  const auto source = make_task_source(a.task, task_options);

  AccuracyBaselineOptions baseline_options;
  baseline_options.names = filter;
  baseline_options.tasks = a.tasks;
  baseline_options.fitted_tasks = a.fitted_tasks;
  baseline_options.seed = seed;
  baseline_options.task_options = task_options;
  baseline_options.predictor.fitted.iterations = a.fit_iterations;
  baseline_options.predictor.gp_bayes.grid_points = a.bayes_grid;
  baseline_options.predictor.gp_bayes.periodic_grid_points = a.bayes_periodic_grid;
  std::vector<AccuracyEntry> entries;
  try {
    entries = accuracy_baselines(*source, baseline_options);
  } catch (const ConfigError& e) {
    throw UsageError(std::string("--models: ") + e.what());
  }
  for (const auto& shipped : bench_models(a.models_dir, a.task)) {
    const auto name = shipped.path.stem().string();
    if (!wanted(filter, shipped.metadata.model.kind) && !wanted(filter, name)) continue;
    entries.push_back({name, load_predictor(shipped.path, device), a.tasks, std::nullopt});
  }
  for (const auto& file : a.model_files) {
    entries.push_back({std::filesystem::path(file).stem().string(), load_model_file(file, device),
                       a.tasks, std::nullopt});
  }
  if (entries.empty()) throw UsageError("no models selected (see --models, --models-dir)");

  // Where the exact baselines' numbers come from: measured here at every shift, here at the
  // first shift only (their kernels are stationary, so nothing they predict depends on Δ;
  // GpBayes.WeightsSumToOneAndAreUnchangedByTranslation and
  // NpeCli.BenchAccuracyPrintsOneRowPerModelAndShift pin it), or an earlier run's rows.
  // "evaluated_at_shift" and "stored_in" in the JSON rows say which.
  std::optional<StoredBaselines> stored;
  AccuracyTableOptions table_options;
  table_options.shifts = shifts;
  table_options.seed = seed;
  table_options.baselines_every_shift = a.baselines_every_shift;
  auto table = [&] {
    try {
      if (a.baselines_from) table_options.stored = &stored.emplace(*a.baselines_from);
      return AccuracyTable(*source, std::move(entries), table_options);
    } catch (const DataError& e) {
      throw UsageError(std::string("--baselines-from: ") + e.what());
    }
  }();
  TerminalProgress bar("bench accuracy", table.total_tasks());
  table.measure([&](int64_t done, const std::string& name) { bar.update(done, name); });
  bar.finish();
  const auto base = table.zero_shift();
  if (grouped && !group.empty()) {
    for (size_t e = 0; e < table.entries().size(); ++e) {
      const auto& name = table.entries()[e].name;
      if (std::find(grouped->models.begin(), grouped->models.end(), name) == grouped->models.end())
        grouped->models.push_back(name);
      grouped->by_group[group][name].push_back(table.result(e, base.value_or(0)));
    }
  }
  const auto oracle = table.oracle(), ceiling = table.ceiling();
  const auto& listed = table.entries();
  auto result = [&](size_t e, size_t s) -> const EvalResult& { return table.result(e, s); };
  if (a.json) {
    std::printf("%s\n", table.rows(a.variant).dump().c_str());
    return 0;
  }
  auto print_table = [&](const char* title,
                         const std::function<std::string(size_t, size_t)>& cell) {
    std::printf("\n%s\n%-18s %6s", title, "model", "tasks");
    for (double s : shifts) std::printf(" %16s", ("Δ=" + nlohmann::json(s).dump()).c_str());
    std::printf("\n");
    for (size_t e = 0; e < listed.size(); ++e) {
      std::printf("%-18s %6lld", listed[e].name.c_str(), (long long)listed[e].tasks);
      for (size_t s = 0; s < shifts.size(); ++s) std::printf(" %16s", cell(e, s).c_str());
      std::printf("\n");
    }
  };
  auto pm = [](double mean, double se) {
    char text[64];
    std::snprintf(text, sizeof text, "%7.3f ± %5.3f", mean, se);
    return std::string(text);
  };
  // The gap by kind and octave of the task's scale (GP tasks: lengthscale or period), at the
  // first shift; one row per group, one column per model other than the ceiling.
  auto print_gap_by_kind_and_scale = [&]() {
    std::vector<size_t> models;
    std::set<std::string> groups;
    for (size_t e = 0; e < listed.size(); ++e) {
      if (e == *ceiling || (oracle && e == *oracle)) continue;
      const auto gaps = table.gap_to_ceiling_by_kind(e, 0, TaskGrouping::kind_and_scale);
      if (gaps.empty()) continue;
      models.push_back(e);
      for (const auto& [group, gap] : gaps) groups.insert(group);
    }
    bool by_scale = false;
    for (const auto& group : groups) by_scale = by_scale || group.find('[') != std::string::npos;
    if (!by_scale) return;
    std::printf("\nGap to the ceiling by task kind and scale ℓ at Δ = %s, paired\n%-24s %6s",
                nlohmann::json(shifts.front()).dump().c_str(), "kind [scale range)", "tasks");
    for (size_t e : models) std::printf(" %16s", listed[e].name.c_str());
    std::printf("\n");
    for (const auto& group : groups) {
      const auto first =
          table.gap_to_ceiling_by_kind(models.front(), 0, TaskGrouping::kind_and_scale);
      const auto count = first.count(group) ? first.at(group).num_tasks : 0;
      std::printf("%-24s %6lld", group.c_str(), (long long)count);
      for (size_t e : models) {
        const auto gaps = table.gap_to_ceiling_by_kind(e, 0, TaskGrouping::kind_and_scale);
        const auto found = gaps.find(group);
        std::printf(" %16s", found == gaps.end()
                                 ? ""
                                 : pm(found->second.mean, found->second.standard_error).c_str());
      }
      std::printf("\n");
    }
  };
  std::printf(
      "%s, seed %llu; ± standard errors over batches of %lld tasks (tasks in a batch "
      "share N_c)\n",
      source->name().c_str(), (unsigned long long)seed, (long long)EvalOptions{}.batch_size);
  for (size_t e = 0; e < listed.size(); ++e) {
    if (table.from_stored(e)) {
      std::printf("%s: the rows stored in %s (same tasks and settings)\n", listed[e].name.c_str(),
                  a.baselines_from->c_str());
    } else if (table.once_per_table(e) && shifts.size() > 1) {
      std::printf(
          "%s: evaluated at Δ = %g only; its stationary kernels make it the same at every Δ\n",
          listed[e].name.c_str(), shifts.front());
    }
  }
  print_table("Mean log-likelihood per target",
              [&](size_t e, size_t s) { return pm(result(e, s).ll_mean, result(e, s).ll_stderr); });
  const bool any_joint = std::any_of(listed.begin(), listed.end(), [](const AccuracyEntry& e) {
    return e.predictor->info().capabilities.joint;
  });
  if (any_joint) {
    print_table(
        "Joint log-likelihood per target, log p(y_t | context) / N_t (diagonal models: "
        "as above)",
        [&](size_t e, size_t s) {
          return pm(result(e, s).ll_joint_mean, result(e, s).ll_joint_stderr);
        });
  }
  if (base) {
    print_table("LL(Δ) − LL(0), paired", [&](size_t e, size_t s) {
      const auto d = table.change_from_zero_shift(e, s);
      return pm(d.mean, d.standard_error);
    });
  }
  if (ceiling) {
    print_table(
        "Gap to the ceiling, LL(gp-bayes) − LL(model), paired (gp-bayes' Gaussian marginals; its "
        "joint mixture for joint models)",
        [&](size_t e, size_t s) {
          const auto d = table.gap_to_ceiling(e, s);
          return pm(d.mean, d.standard_error);
        });
    // The same gap by task kind, at the first shift (the kinds are those of the tasks there).
    std::set<std::string> kinds;
    for (size_t e = 0; e < listed.size(); ++e) {
      for (const auto& [kind, gap] : table.gap_to_ceiling_by_kind(e, 0)) kinds.insert(kind);
    }
    if (!kinds.empty()) {
      std::printf("\nGap to the ceiling by task kind at Δ = %s, paired (tasks of each kind)\n%-18s",
                  nlohmann::json(shifts.front()).dump().c_str(), "model");
      for (const auto& kind : kinds) std::printf(" %16s", kind.c_str());
      std::printf("\n%-18s", "tasks");
      const auto counts = ll_by_kind(result(*ceiling, 0));
      for (const auto& kind : kinds) {
        const auto found = counts.find(kind);
        std::printf(" %16lld", (long long)(found == counts.end() ? 0 : found->second.num_tasks));
      }
      std::printf("\n");
      for (size_t e = 0; e < listed.size(); ++e) {
        const auto gaps = table.gap_to_ceiling_by_kind(e, 0);
        std::printf("%-18s", listed[e].name.c_str());
        for (const auto& kind : kinds) {
          const auto found = gaps.find(kind);
          std::printf(" %16s", found == gaps.end()
                                   ? ""
                                   : pm(found->second.mean, found->second.standard_error).c_str());
        }
        std::printf("\n");
      }
      print_gap_by_kind_and_scale();
    }
    print_table("gp-bayes' mixture marginals, LL per target (above its Gaussian's)",
                [&](size_t e, size_t s) {
                  const auto& r = result(e, s);
                  return r.batch_mixture_ll.empty() ? std::string("")
                                                    : pm(r.ll_mixture_mean, r.ll_mixture_stderr);
                });
  }
  if (oracle) {
    print_table("Gap to the GP oracle, LL(oracle) − LL(model), paired", [&](size_t e, size_t s) {
      const auto d = table.gap_to_oracle(e, s);
      return pm(d.mean, d.standard_error);
    });
  }
  print_table("Coverage of the central 50% / 90% / 95% intervals", [&](size_t e, size_t s) {
    const auto& c = result(e, s).coverage;
    char text[64];
    std::snprintf(text, sizeof text, "%.2f/%.2f/%.2f", c[0], c[1], c[2]);
    return std::string(text);
  });
  return 0;
}

}  // namespace

Command add_accuracy_bench(CLI::App& bench) {
  auto* accuracy =
      bench.add_subcommand("accuracy", "Mean log-likelihood of every shipped model at each Δ");
  auto acc = std::make_shared<AccuracyArguments>();
  accuracy->add_option("--task", acc->task, "Task: " + task_names_text())->capture_default_str();
  accuracy->add_option("--task-option", acc->task_options, "KEY=VALUE setting of the task");
  add_data_option(accuracy, acc->task_options);
  accuracy->add_option("--tasks", acc->tasks, "Tasks per Δ")
      ->check(at_least(1))
      ->capture_default_str();
  accuracy->add_option("--shifts", acc->shifts, "Comma-separated Δ values")->capture_default_str();
  accuracy->add_option("--seed", acc->seed, "Test seed")->capture_default_str();
  accuracy->add_option("--models", acc->models, "Comma-separated kinds or file names");
  accuracy->add_option("--models-dir", acc->models_dir, "Folder of checkpoints to compare");
  accuracy->add_option("--model", acc->model_files,
                       "A model file to compare: a checkpoint or a TorchScript model (which runs "
                       "its code); repeatable");
  accuracy->add_option("--device", acc->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  accuracy->add_option("--fit-iterations", acc->fit_iterations, "Adam iterations of fitted GPs")
      ->check(at_least(0))
      ->capture_default_str();
  accuracy->add_option("--fitted-tasks", acc->fitted_tasks, "Tasks for the fitted GPs")
      ->check(at_least(1))
      ->capture_default_str();
  accuracy
      ->add_option("--bayes-grid", acc->bayes_grid,
                   "gp-bayes: starting cells per kernel family over the scale prior (SE, Matérn)")
      ->check(CLI::Range(int64_t{1}, int64_t{65536}))
      ->capture_default_str();
  accuracy
      ->add_option("--bayes-periodic-grid", acc->bayes_periodic_grid,
                   "gp-bayes: starting cells over the periodic family's period prior")
      ->check(CLI::Range(int64_t{1}, int64_t{65536}))
      ->capture_default_str();
  accuracy->add_flag("--json", acc->json, "Print JSON rows (with each batch's values)");
  accuracy->add_option("--baselines-from", acc->baselines_from,
                       "gp-bayes and gp-oracle: reuse their rows from an earlier --json output "
                       "of the same tasks (same task, options, seed, --tasks, grids)");
  accuracy->add_flag("--baselines-every-shift", acc->baselines_every_shift,
                     "gp-bayes and gp-oracle: evaluate at every Δ (default: at the first Δ only, "
                     "as their predictions do not depend on it)");
  // Accuracy tables stay float32 unless asked: their numbers must not depend on the CPU.
  acc->runtime.precision = "fp32";
  add_runtime_options(*accuracy, acc->runtime);

  return {accuracy, [acc] { return bench_accuracy(*acc); }};
}

}  // namespace npe::cli
