// npe bench: the one place where accuracy and speed are measured.

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
#include "stored_baselines.h"
#include "terminal_progress.h"

namespace npe::cli {
namespace {

bool wanted(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

// The shipped models of the task, or those in --models-dir.
std::vector<ShippedModel> bench_models(const std::optional<std::string>& dir,
                                       const std::string& task = "gp1d") {
  std::vector<std::string> problems;
  auto models = dir ? find_models_in(*dir, &problems)
                    : find_shipped_models(task_info(task).models_folder, &problems);
  for (const auto& p : problems) std::fprintf(stderr, "npe bench: skipped: %s\n", p.c_str());
  return models;
}

nlohmann::json machine_json(torch::Device device) {
  return {{"cpu", cpu_model()},
          {"threads", at::get_num_threads()},
          {"precision", precision_name(pairwise_precision())},
          {"te_attention", attention_implementation_name(attention_implementation())},
          {"device", describe_device(device)},
          {"libtorch", libtorch_version()}};
}

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

// Per model, the results of each variant of a group (ERA5: one region's test blocks), in the
// order of the variants, so that groups can be compared variant by variant.
struct VariantResults {
  std::vector<std::string> models;  // in order of first appearance
  std::map<std::string, std::map<std::string, std::vector<EvalResult>>> by_group;  // group, model
};

int bench_accuracy_once(const AccuracyArguments& a, VariantResults* grouped = nullptr,
                        const std::string& group = {});

// Mean and standard error over variants (the independent units of a group).
std::pair<double, double> mean_and_stderr(const std::vector<double>& values) {
  const double n = double(values.size());
  double mean = 0.0;
  for (double v : values) mean += v / n;
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double se = values.size() > 1 ? std::sqrt(squares / (n - 1.0) / n) : std::nan("");
  return {mean, se};
}

// The summary over each group's variants: mean log-likelihood ± s.e. over variants, 90 %
// coverage, and between two groups the paired difference variant by variant (ERA5: unseen
// region minus training region on the same test blocks).
void print_group_summary(const VariantResults& r, const TaskSource& source) {
  if (r.by_group.empty()) return;
  // Groups in the order the variants named them.
  std::vector<std::string> ordered;
  for (const auto& v : source.evaluation_variants()) {
    if (!v.group.empty() && std::find(ordered.begin(), ordered.end(), v.group) == ordered.end())
      ordered.push_back(v.group);
  }
  const auto k = r.by_group.begin()->second.begin()->second.size();
  std::printf(
      "\nSummary over %zu variants per group (± standard error over variants: they are the "
      "independent units)\n%-18s",
      k, "model");
  for (const auto& g : ordered) std::printf(" %16s %9s", ("LL " + g).c_str(), "cov90");
  if (ordered.size() == 2) std::printf(" %20s", (ordered[1] + " − " + ordered[0]).c_str());
  std::printf("\n");
  for (const auto& model : r.models) {
    std::printf("%-18s", model.c_str());
    std::vector<std::vector<double>> lls;
    for (const auto& g : ordered) {
      const auto& results = r.by_group.at(g).at(model);
      std::vector<double> ll, coverage;
      for (const auto& result : results) {
        ll.push_back(result.ll_mean);
        coverage.push_back(result.coverage[1]);
      }
      const auto [m, se] = mean_and_stderr(ll);
      std::printf(" %8.3f ± %5.3f %9.2f", m, se, mean_and_stderr(coverage).first);
      lls.push_back(ll);
    }
    if (lls.size() == 2 && lls[0].size() == lls[1].size()) {
      std::vector<double> difference;
      for (size_t i = 0; i < lls[0].size(); ++i) difference.push_back(lls[1][i] - lls[0][i]);
      const auto [m, se] = mean_and_stderr(difference);
      std::printf(" %11.3f ± %5.3f", m, se);
    }
    std::printf("\n");
  }
  if (const auto* era5 = dynamic_cast<const Era5TaskSource*>(&source)) {
    std::printf(
        "Log-likelihoods in nats per target in standardised units (σ = %.4f %s); per %s, "
        "subtract ln σ = %.4f.\n",
        era5->output_scale(), era5->field().units.c_str(), era5->field().units.c_str(),
        std::log(era5->output_scale()));
  }
}

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
  const auto& task_name = a.task;
  const auto task_options = parse_key_values(a.task_options, "--task-option");
  const auto tasks = a.tasks;
  const auto shifts = parse_numbers(a.shifts, "--shifts");
  const auto seed = a.seed;
  const auto filter = parse_list(a.models);
  const auto& models_dir = a.models_dir;
  const auto device = parse_device(a.device);
  PredictorOptions baseline_options;
  baseline_options.fitted.iterations = a.fit_iterations;
  baseline_options.gp_bayes.grid_points = a.bayes_grid;
  baseline_options.gp_bayes.periodic_grid_points = a.bayes_periodic_grid;
  const auto fitted_tasks = a.fitted_tasks;
  const bool json = a.json;
  const auto source = make_task_source(task_name, task_options);
  const auto prior = gp_task_prior(*source);
  if (prior) baseline_options.gp_prior = *prior;

  struct Entry {
    std::string name;
    std::unique_ptr<Predictor> predictor;
    int64_t tasks;
    // The exact GP baselines (oracle, Bayes): what decides their evaluation, to store and reuse.
    std::optional<BaselineRun> baseline;
  };
  std::vector<Entry> entries;
  // Baselines: the oracle where the tasks carry one, the Bayes-optimal GP where their prior is
  // known; the fitted GP whose kernel suits D_x.
  const bool has_oracle = source->sample(1, 0).has_oracle();
  for (const auto& info : predictor_infos()) {
    if (info.capabilities.trainable) continue;
    const auto& caps = info.capabilities;
    const bool suits = caps.needs_oracle     ? has_oracle
                       : caps.needs_gp_prior ? prior.has_value()
                                             : caps.default_for_dim_x(source->dim_x());
    if (filter.empty() ? !suits : !wanted(filter, info.name)) continue;
    if (caps.needs_gp_prior && !prior) {
      throw UsageError(info.name + " averages over the prior of GP tasks; " + source->name() +
                       " tasks have none");
    }
    const bool exact = caps.needs_oracle || caps.needs_gp_prior;
    const auto n = exact ? tasks : std::min(tasks, fitted_tasks);
    std::optional<BaselineRun> baseline;
    if (exact) {
      baseline =
          BaselineRun{info.name, source->name(), task_options, seed, n, EvalOptions{}.batch_size};
      if (caps.needs_gp_prior) {
        baseline->settings = {{"bayes_grid", a.bayes_grid},
                              {"bayes_periodic_grid", a.bayes_periodic_grid}};
      }
    }
    entries.push_back({info.name, make_predictor(info.name, baseline_options), n, baseline});
  }
  for (const auto& shipped : bench_models(models_dir, task_name)) {
    const auto name = shipped.path.stem().string();
    if (!wanted(filter, shipped.metadata.model.kind) && !wanted(filter, name)) continue;
    entries.push_back({name, load_predictor(shipped.path, device), tasks, std::nullopt});
  }
  for (const auto& file : a.model_files) {
    entries.push_back({std::filesystem::path(file).stem().string(), load_model_file(file, device),
                       tasks, std::nullopt});
  }
  if (entries.empty()) throw UsageError("no models selected (see --models, --models-dir)");

  // Where the exact baselines' numbers come from: measured here at every shift, here at the
  // first shift only (their kernels are stationary, so nothing they predict depends on Δ;
  // GpBayes.WeightsSumToOneAndAreUnchangedByTranslation and
  // NpeCli.BenchAccuracyPrintsOneRowPerModelAndShift pin it), or an earlier run's rows.
  // "evaluated_at_shift" and "stored_in" in the JSON rows say which.
  const std::optional<StoredBaselines> stored =
      a.baselines_from ? std::optional<StoredBaselines>(std::in_place, *a.baselines_from)
                       : std::nullopt;
  std::vector<std::optional<EvalResult>> from_file(entries.size());
  for (size_t e = 0; e < entries.size(); ++e) {
    if (stored && entries[e].baseline) from_file[e] = stored->find(*entries[e].baseline);
  }
  auto once_per_table = [&](size_t e) { return entries[e].baseline && !a.baselines_every_shift; };
  auto evaluated_shifts = [&](size_t e) -> int64_t {
    return from_file[e] ? 0 : once_per_table(e) ? 1 : int64_t(shifts.size());
  };
  int64_t total = 0, done = 0;
  for (size_t e = 0; e < entries.size(); ++e) total += entries[e].tasks * evaluated_shifts(e);
  TerminalProgress bar("bench accuracy", total);
  // results[e][s]: entry e at shifts[s]; all on the same tasks (same seed and batch size), so
  // differences between shifts and between predictors are paired batch by batch.
  std::vector<std::vector<EvalResult>> results(entries.size());
  for (size_t e = 0; e < entries.size(); ++e) {
    for (double shift : shifts) {
      if (from_file[e]) {
        results[e].push_back(*from_file[e]);
        continue;
      }
      if (!results[e].empty() && once_per_table(e)) {
        results[e].push_back(results[e].front());
        continue;
      }
      EvalOptions options;
      options.num_tasks = entries[e].tasks;
      options.seed = seed;
      options.shift = {shift};
      results[e].push_back(
          evaluate(*entries[e].predictor, *source, options, [&](const Progress& p) {
            bar.update(done + p.done, entries[e].name);
            return true;
          }));
      done += entries[e].tasks;
    }
  }
  bar.finish();
  const auto zero = std::find(shifts.begin(), shifts.end(), 0.0);
  const std::optional<size_t> base =
      zero == shifts.end() ? std::nullopt : std::optional<size_t>(zero - shifts.begin());
  if (grouped && !group.empty()) {
    for (size_t e = 0; e < entries.size(); ++e) {
      const auto& name = entries[e].name;
      if (std::find(grouped->models.begin(), grouped->models.end(), name) == grouped->models.end())
        grouped->models.push_back(name);
      grouped->by_group[group][name].push_back(results[e][base.value_or(0)]);
    }
  }
  std::optional<size_t> oracle, ceiling;
  for (size_t e = 0; e < entries.size(); ++e) {
    if (entries[e].predictor->info().capabilities.needs_oracle) oracle = e;
    if (entries[e].predictor->info().capabilities.needs_gp_prior) ceiling = e;
  }
  // The ceiling of a model with Gaussian marginals is gp-bayes' moment-matched Gaussian; that of
  // a joint model, gp-bayes' mixture of joint Gaussians (the joint log-likelihoods).
  auto gap_to_ceiling = [&](size_t e, size_t s) {
    return entries[e].predictor->info().capabilities.joint
               ? paired_joint_difference(results[*ceiling][s], results[e][s])
               : paired_difference(results[*ceiling][s], results[e][s]);
  };
  auto gap_to_ceiling_by_kind = [&](size_t e, size_t s,
                                    TaskGrouping grouping = TaskGrouping::kind) {
    return paired_difference_by_kind(results[*ceiling][s], results[e][s],
                                     entries[e].predictor->info().capabilities.joint, grouping);
  };
  // Where the tasks have kinds (GP tasks: the kernel family), each kind's (or kind and scale's)
  // log-likelihood and gap to the ceiling: where the gap lies.
  auto by_task_kind_json = [&](size_t e, size_t s, TaskGrouping grouping = TaskGrouping::kind) {
    auto kinds = ll_by_kind_json(results[e][s], grouping);
    if (ceiling) {
      for (const auto& [kind, gap] : gap_to_ceiling_by_kind(e, s, grouping)) {
        kinds[kind]["gap_to_ceiling"] = gap.mean;
        kinds[kind]["gap_to_ceiling_stderr"] = gap.standard_error;
        kinds[kind]["gap_to_ceiling_tasks"] = gap.num_tasks;
      }
    }
    return kinds;
  };
  nlohmann::json rows = nlohmann::json::array();
  for (size_t e = 0; e < entries.size(); ++e) {
    for (size_t s = 0; s < shifts.size(); ++s) {
      const auto& result = results[e][s];
      auto row = to_json(result);
      row.update({{"model", entries[e].name},
                  {"kind", entries[e].predictor->info().name},
                  {"task", source->name()},
                  {"shift", shifts[s]},
                  {"batch_size", EvalOptions{}.batch_size}});
      if (!a.variant.empty()) row["variant"] = a.variant;
      row["per_batch"] = per_batch_json(result);
      if (auto per_task = per_task_json(result); !per_task.is_null()) {
        row["per_task"] = std::move(per_task);
        row["by_task_kind"] = by_task_kind_json(e, s);
        if (!result.task_scale.empty()) {
          row["by_task_kind_and_scale"] = by_task_kind_json(e, s, TaskGrouping::kind_and_scale);
        }
      }
      if (const auto& baseline = entries[e].baseline) {
        row.update(baseline->to_json());
        if (from_file[e]) {
          row["stored_in"] = *a.baselines_from;
        } else if (once_per_table(e)) {
          row["evaluated_at_shift"] = shifts.front();
        }
      }
      if (base) {
        const auto d = paired_difference(result, results[e][*base]);
        row["ll_change_vs_shift0"] = d.mean;
        row["paired_stderr_vs_shift0"] = d.standard_error;
      }
      if (oracle) {
        const auto gap = paired_difference(results[*oracle][s], result);
        row["gap_to_oracle"] = gap.mean;
        row["gap_to_oracle_stderr"] = gap.standard_error;
        row["gap_to_oracle_tasks"] = gap.num_tasks;
      }
      if (ceiling) {
        const auto gap = gap_to_ceiling(e, s);
        row["gap_to_ceiling"] = gap.mean;
        row["gap_to_ceiling_stderr"] = gap.standard_error;
        row["gap_to_ceiling_tasks"] = gap.num_tasks;
        row["ceiling"] = entries[e].predictor->info().capabilities.joint ? "joint" : "gaussian";
      }
      rows.push_back(row);
    }
  }
  if (json) {
    std::printf("%s\n", rows.dump().c_str());
    return 0;
  }
  auto print_table = [&](const char* title,
                         const std::function<std::string(size_t, size_t)>& cell) {
    std::printf("\n%s\n%-18s %6s", title, "model", "tasks");
    for (double s : shifts) std::printf(" %16s", ("Δ=" + nlohmann::json(s).dump()).c_str());
    std::printf("\n");
    for (size_t e = 0; e < entries.size(); ++e) {
      std::printf("%-18s %6lld", entries[e].name.c_str(), (long long)entries[e].tasks);
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
    for (size_t e = 0; e < entries.size(); ++e) {
      if (e == *ceiling || (oracle && e == *oracle)) continue;
      const auto gaps = gap_to_ceiling_by_kind(e, 0, TaskGrouping::kind_and_scale);
      if (gaps.empty()) continue;
      models.push_back(e);
      for (const auto& [group, gap] : gaps) groups.insert(group);
    }
    bool by_scale = false;
    for (const auto& group : groups) by_scale = by_scale || group.find('[') != std::string::npos;
    if (!by_scale) return;
    std::printf("\nGap to the ceiling by task kind and scale ℓ at Δ = %s, paired\n%-24s %6s",
                nlohmann::json(shifts.front()).dump().c_str(), "kind [scale range)", "tasks");
    for (size_t e : models) std::printf(" %16s", entries[e].name.c_str());
    std::printf("\n");
    for (const auto& group : groups) {
      const auto first = gap_to_ceiling_by_kind(models.front(), 0, TaskGrouping::kind_and_scale);
      const auto count = first.count(group) ? first.at(group).num_tasks : 0;
      std::printf("%-24s %6lld", group.c_str(), (long long)count);
      for (size_t e : models) {
        const auto gaps = gap_to_ceiling_by_kind(e, 0, TaskGrouping::kind_and_scale);
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
  for (size_t e = 0; e < entries.size(); ++e) {
    if (from_file[e]) {
      std::printf("%s: the rows stored in %s (same tasks and settings)\n", entries[e].name.c_str(),
                  a.baselines_from->c_str());
    } else if (once_per_table(e) && shifts.size() > 1) {
      std::printf(
          "%s: evaluated at Δ = %g only; its stationary kernels make it the same at every Δ\n",
          entries[e].name.c_str(), shifts.front());
    }
  }
  print_table("Mean log-likelihood per target", [&](size_t e, size_t s) {
    return pm(results[e][s].ll_mean, results[e][s].ll_stderr);
  });
  const bool any_joint = std::any_of(entries.begin(), entries.end(), [](const Entry& e) {
    return e.predictor->info().capabilities.joint;
  });
  if (any_joint) {
    print_table(
        "Joint log-likelihood per target, log p(y_t | context) / N_t (diagonal models: "
        "as above)",
        [&](size_t e, size_t s) {
          return pm(results[e][s].ll_joint_mean, results[e][s].ll_joint_stderr);
        });
  }
  if (base) {
    print_table("LL(Δ) − LL(0), paired", [&](size_t e, size_t s) {
      const auto d = paired_difference(results[e][s], results[e][*base]);
      return pm(d.mean, d.standard_error);
    });
  }
  if (ceiling) {
    print_table(
        "Gap to the ceiling, LL(gp-bayes) − LL(model), paired (gp-bayes' Gaussian marginals; its "
        "joint mixture for joint models)",
        [&](size_t e, size_t s) {
          const auto d = gap_to_ceiling(e, s);
          return pm(d.mean, d.standard_error);
        });
    // The same gap by task kind, at the first shift (the kinds are those of the tasks there).
    std::set<std::string> kinds;
    for (size_t e = 0; e < entries.size(); ++e) {
      for (const auto& [kind, gap] : gap_to_ceiling_by_kind(e, 0)) kinds.insert(kind);
    }
    if (!kinds.empty()) {
      std::printf("\nGap to the ceiling by task kind at Δ = %s, paired (tasks of each kind)\n%-18s",
                  nlohmann::json(shifts.front()).dump().c_str(), "model");
      for (const auto& kind : kinds) std::printf(" %16s", kind.c_str());
      std::printf("\n%-18s", "tasks");
      const auto counts = ll_by_kind(results[*ceiling][0]);
      for (const auto& kind : kinds) {
        const auto found = counts.find(kind);
        std::printf(" %16lld", (long long)(found == counts.end() ? 0 : found->second.num_tasks));
      }
      std::printf("\n");
      for (size_t e = 0; e < entries.size(); ++e) {
        const auto gaps = gap_to_ceiling_by_kind(e, 0);
        std::printf("%-18s", entries[e].name.c_str());
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
                  const auto& r = results[e][s];
                  return r.batch_mixture_ll.empty() ? std::string("")
                                                    : pm(r.ll_mixture_mean, r.ll_mixture_stderr);
                });
  }
  if (oracle) {
    print_table("Gap to the GP oracle, LL(oracle) − LL(model), paired", [&](size_t e, size_t s) {
      const auto d = paired_difference(results[*oracle][s], results[e][s]);
      return pm(d.mean, d.standard_error);
    });
  }
  print_table("Coverage of the central 50% / 90% / 95% intervals", [&](size_t e, size_t s) {
    const auto& c = results[e][s].coverage;
    char text[64];
    std::snprintf(text, sizeof text, "%.2f/%.2f/%.2f", c[0], c[1], c[2]);
    return std::string(text);
  });
  return 0;
}

struct Timing {
  double median_ms, p10_ms, p90_ms;
};

Timing summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[static_cast<size_t>(std::lround(q * double(ms.size() - 1)))];
  };
  return {at(0.5), at(0.1), at(0.9)};
}

struct LatencyArguments {
  int64_t repeats = 50, warmup = 5, context = 64, targets = 256;
  std::string models, device = "all", workload = "tasks";
  std::optional<std::string> models_dir, size;
  std::vector<std::string> model_files;
  int fit_iterations = 60;
  RuntimeArguments runtime;
  bool json = false;
};

double matmul_peak_gflops(torch::Device device, int64_t n);

int bench_latency(const LatencyArguments& a) {
  apply_runtime_options(a.runtime);
  const auto repeats = a.repeats;
  const auto warmup = a.warmup;
  const auto num_context = a.context;
  const auto num_targets = a.targets;
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
  GpTaskConfig config;
  config.min_num_context = config.max_num_context = num_context;
  config.num_targets = num_targets;
  const auto batch = GpTaskGenerator(config).sample(1, 1234);
  std::vector<ModelConfig> configs;
  std::vector<std::filesystem::path> paths;
  if (size) {
    for (const auto& info : model_infos()) {
      if (!info.on_grid) configs.push_back(default_model_config(info.kind, *size));
    }
  } else {
    for (const auto& s : bench_models(models_dir)) {
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
    const BatchShape shape{1, num_context, num_targets, 6.0};
    auto task = batch.task.to(device);
    auto sync = [device] {
      if (device.is_cuda()) torch::cuda::synchronize();
    };
    // GP baselines are CPU code: timed once, on the CPU pass.
    std::vector<std::shared_ptr<Predictor>> baselines;
    for (const auto& info : predictor_infos()) {
      if (info.capabilities.trainable || !device.is_cpu() || !wanted(filter, info.name)) continue;
      // The latency workload is 1-D: the baseline chosen for it by default.
      if (filter.empty() && !info.capabilities.default_for_dim_x(1)) continue;
      PredictorOptions options;
      options.fitted.iterations = fit_iterations;
      std::shared_ptr<Predictor> baseline = make_predictor(info.name, options);
      baselines.push_back(baseline);
      runs.push_back({info.name, [baseline, &batch] { baseline->predict(batch); }});
      run_flops.push_back(baseline->prediction_flops(shape));
    }
    std::vector<std::shared_ptr<NeuralProcessImpl>> keep;
    for (size_t i = 0; i < configs.size(); ++i) {
      if (!wanted(filter, configs[i].kind)) continue;
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
      // Rows of shipped checkpoints are named by file (tetnp, tetnp-paper): one kind may ship in
      // several sizes.
      const auto row_name = size ? configs[i].kind : paths[i].stem().string();
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
  std::printf("one prediction, Nc = %lld, Nt = %lld, %lld runs after %lld warm-up\n",
              (long long)num_context, (long long)num_targets, (long long)repeats,
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

// Float32 matrix-multiply throughput of this machine, measured in the same run.
double matmul_peak_gflops(torch::Device device, int64_t n) {
  auto a = torch::randn({n, n}, torch::TensorOptions().device(device));
  auto b = torch::randn({n, n}, torch::TensorOptions().device(device));
  auto sync = [device] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  a.matmul(b);
  sync();
  double best = 0.0;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    auto c = a.matmul(b);
    sync();
    best = std::max(best, 2.0 * n * n * n / seconds_since(start) / 1e9);
  }
  return best;
}

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

// Kinds timed on the reference workload when --models is not given: those the authors'
// benchmark script also builds.
constexpr const char* kReferenceKinds = "tnp,tetnp";

void print_reference_rows(const nlohmann::json& rows, const char* what) {
  std::printf("%s\n", what);
  std::printf("%-10s %10s %10s %10s %6s\n", "model", "median ms", "p10 ms", "p90 ms", "runs");
  for (const auto& r : rows) {
    std::printf("%-10s %10.2f %10.2f %10.2f %6lld\n", r["model"].get<std::string>().c_str(),
                r["median_ms"].get<double>(), r["p10_ms"].get<double>(), r["p90_ms"].get<double>(),
                (long long)r["runs"].get<int64_t>());
  }
}

nlohmann::json reference_row(const std::string& kind, const std::vector<double>& ms,
                             torch::Device device) {
  const auto t = summarise(ms);
  return {{"model", kind},
          {"workload", "reference"},
          {"median_ms", t.median_ms},
          {"p10_ms", t.p10_ms},
          {"p90_ms", t.p90_ms},
          {"runs", static_cast<int64_t>(ms.size())},
          {"machine", machine_json(device)}};
}

// Times fresh reference-size models of each kind with `time` (milliseconds per run) and prints
// or dumps one row per kind, labelled with the workload's sizes.
int bench_reference(const std::string& models, torch::Device device, bool json,
                    const nlohmann::json& sizes, const char* title,
                    const std::function<std::vector<double>(NeuralProcessImpl&)>& time) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& kind : parse_list(models)) {
    torch::manual_seed(0);
    auto model = make_model(reference_model_config(kind));
    model->to(device);
    auto row = reference_row(kind, time(*model), device);
    row.update(sizes);
    rows.push_back(row);
  }
  if (json) {
    std::printf("%s\n", rows.dump().c_str());
    return 0;
  }
  print_reference_rows(rows, title);
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

Command add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand(
      "bench", "Measure accuracy, prediction latency, training speed, memory or arithmetic peak");
  // An unknown suite is reported by name (below) rather than as a missing subcommand.
  bench->allow_extras();

  auto* accuracy =
      bench->add_subcommand("accuracy", "Mean log-likelihood of every shipped model at each Δ");
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

  auto* latency = bench->add_subcommand("latency", "Time one prediction per model");
  auto lat = std::make_shared<LatencyArguments>();
  latency->add_option("--repeats", lat->repeats, "Timed runs")
      ->check(at_least(1))
      ->capture_default_str();
  auto* latency_warmup =
      latency->add_option("--warmup", lat->warmup, "Untimed runs first (reference: 10)")
          ->check(at_least(0))
          ->capture_default_str();
  latency->add_option("--context", lat->context, "Context points")
      ->check(at_least(0))
      ->capture_default_str();
  latency->add_option("--targets", lat->targets, "Target points")
      ->check(at_least(1))
      ->capture_default_str();
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

  auto* train = bench->add_subcommand("train", "Training steps per second and FLOP rate");
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

  const auto memory = add_memory_bench(*bench);
  const auto peak = add_peak_bench(*bench);

  return {bench, [=] {
            if (accuracy->parsed()) return bench_accuracy(*acc);
            if (latency->parsed()) {
              if (lat->workload == "reference") {
                // The script's counts unless given: 50 timed runs after 10 warm-up runs.
                auto args = *lat;
                if (latency_warmup->count() == 0) args.warmup = 10;
                return bench_latency_reference(args);
              }
              return bench_latency(*lat);
            }
            if (train->parsed()) {
              if (tr->workload == "reference") {
                // The script's counts and models unless given: 30 steps after 5 warm-up ones.
                auto args = *tr;
                if (train_steps->count() == 0) args.steps = 30;
                if (train_warmup->count() == 0) args.warmup = 5;
                if (train_models->count() == 0) args.models = kReferenceKinds;
                return bench_train_reference(args);
              }
              return bench_train(*tr);
            }
            if (memory.app->parsed()) return memory.run();
            if (peak.app->parsed()) return peak.run();
            const auto extras = bench->remaining();
            throw UsageError(extras.empty()
                                 ? "bench needs a suite: accuracy, latency, train, memory or peak"
                                 : "unknown bench suite '" + extras.front() +
                                       "' (accuracy, latency, train, memory, peak)");
          }};
}

}  // namespace npe::cli
