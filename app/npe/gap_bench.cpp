// npe bench gap: the gap to gp-bayes split into the model's mean and spread (core's
// decompose_gaps), by kernel family, and regressed on the entropy of gp-bayes' posterior over
// the period and on the period itself: is it finding the period or drawing the oscillation that
// costs the networks?

#include "gap_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "bench_common.h"
#include "model_file.h"
#include "npe/data/gp_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/predictors/gp_bayes.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/training/gap_decomposition.h"
#include "option_values.h"
#include "terminal_progress.h"

namespace npe::cli {
namespace {

struct GapArguments {
  std::string task = "gp1d", models;
  std::vector<std::string> task_options;
  std::optional<std::string> models_dir;
  std::vector<std::string> model_files;
  int64_t tasks = 512;
  uint64_t seed = 0;
  RuntimeArguments runtime;
  bool json = false;
};

// The family index of the periodic kernel in the prior, if it has one.
std::optional<int64_t> periodic_family(const GpTaskConfig& prior) {
  const auto& kernels = prior.kernels;
  const auto it = std::find(kernels.begin(), kernels.end(), KernelKind::Periodic);
  if (it == kernels.end()) return std::nullopt;
  return int64_t(it - kernels.begin());
}

nlohmann::json summary_json(const GapSummary& s) {
  return {{"tasks", s.num_tasks},
          {"gap", s.gap},
          {"gap_stderr", s.gap_stderr},
          {"mean_part", s.mean_part},
          {"mean_part_stderr", s.mean_part_stderr},
          {"spread_part", s.spread_part},
          {"spread_part_stderr", s.spread_part_stderr}};
}

// A fit's coefficients by name: "intercept" then `names`, each with its standard error.
nlohmann::json fit_json(const LinearFit& f, const std::vector<std::string>& names) {
  nlohmann::json json = {{"points", f.points}, {"r_squared", f.r_squared}};
  for (size_t j = 0; j < f.coefficients.size(); ++j) {
    const auto name = j == 0 ? std::string("intercept") : names[j - 1];
    json[name] = f.coefficients[j];
    json[name + "_stderr"] = f.stderrs[j];
  }
  return json;
}

// The periodic tasks' mean gap in each third of the covariate's range of values (by rank).
std::vector<GapSummary> by_tertile(std::vector<TaskGap> gaps, double TaskGap::*key) {
  std::sort(gaps.begin(), gaps.end(),
            [&](const auto& a, const auto& b) { return a.*key < b.*key; });
  std::vector<GapSummary> out;
  for (size_t third = 0; third < 3; ++third) {
    const auto begin = gaps.size() * third / 3, end = gaps.size() * (third + 1) / 3;
    out.push_back(summarise_gaps({gaps.begin() + long(begin), gaps.begin() + long(end)}));
  }
  return out;
}

int bench_gap(const GapArguments& a) {
  apply_runtime_options(a.runtime);
  const auto task_options = parse_key_values(a.task_options, "--task-option");
  const auto source = make_task_source(a.task, task_options);
  const auto prior = gp_task_prior(*source);
  if (!prior) {
    throw UsageError("bench gap measures the gap to the Bayes ceiling of GP tasks; " +
                     source->name() + " tasks have none");
  }
  PredictorOptions baseline;
  baseline.gp_prior = *prior;
  auto ceiling = make_predictor("gp-bayes", baseline);

  std::vector<std::string> names;
  std::vector<std::unique_ptr<Predictor>> owned;
  const auto filter = parse_list(a.models);
  for (const auto& shipped : bench_models(a.models_dir, a.task)) {
    const auto name = shipped.path.stem().string();
    if (!wanted(filter, shipped.metadata.model.kind) && !wanted(filter, name)) continue;
    names.push_back(name);
    owned.push_back(load_predictor(shipped.path, torch::kCPU));
  }
  for (const auto& file : a.model_files) {
    names.push_back(std::filesystem::path(file).stem().string());
    owned.push_back(load_model_file(file, torch::kCPU));
  }
  if (owned.empty()) throw UsageError("no models selected (see --models, --models-dir, --model)");
  std::vector<Predictor*> models;
  for (auto& m : owned) models.push_back(m.get());

  // The entropy of gp-bayes' posterior over log period (within the periodic family), per task.
  const auto periodic = periodic_family(*prior);
  TaskCovariate entropy;
  if (periodic) {
    const auto hypotheses = std::make_shared<GpHypotheses>(gp_prior_hypotheses(*prior));
    entropy = [hypotheses, family = *periodic](const TaskBatch& batch) {
      std::vector<double> values;
      for (const auto& posterior : gp_bayes_posteriors(*hypotheses, batch.task))
        values.push_back(gp_bayes_scale_entropy(posterior, family));
      return values;
    };
  }
  EvalOptions options;
  options.num_tasks = a.tasks;
  options.seed = a.seed;
  TerminalProgress bar("bench gap", a.tasks);
  const auto gaps =
      decompose_gaps(models, *ceiling, *source, options, entropy, [&](const Progress& p) {
        bar.update(p.done, "gp-bayes and the models");
        return true;
      });
  bar.finish();

  std::vector<std::string> kinds;
  for (const auto& g : gaps.front()) {
    if (!g.kind.empty() && std::find(kinds.begin(), kinds.end(), g.kind) == kinds.end())
      kinds.push_back(g.kind);
  }
  std::sort(kinds.begin(), kinds.end());
  auto is_periodic = [](const TaskGap& g) { return g.kind == "periodic"; };
  nlohmann::json rows = nlohmann::json::array();
  for (size_t m = 0; m < models.size(); ++m) {
    nlohmann::json row = {{"model", names[m]},
                          {"kind", models[m]->info().name},
                          {"task", source->name()},
                          {"seed", a.seed},
                          {"reference", "gp-bayes (moment-matched Gaussian)"},
                          {"all", summary_json(summarise_gaps(gaps[m]))}};
    for (const auto& kind : kinds) {
      row["by_task_kind"][kind] =
          summary_json(summarise_gaps(gaps[m], [&](const TaskGap& g) { return g.kind == kind; }));
    }
    std::vector<TaskGap> periodic_tasks;
    for (const auto& g : gaps[m]) {
      if (is_periodic(g) && std::isfinite(g.covariate) && std::isfinite(g.scale))
        periodic_tasks.push_back(g);
    }
    if (periodic_tasks.size() >= 3) {
      std::vector<double> entropies, log_periods, gap_values;
      for (auto g : periodic_tasks) {
        entropies.push_back(g.covariate);
        log_periods.push_back(std::log(g.scale));
        gap_values.push_back(g.gap);
      }
      auto& p = row["periodic"];
      p["gap_on_period_entropy"] = fit_json(fit_linear({entropies}, gap_values), {"entropy"});
      p["gap_on_log_period"] = fit_json(fit_linear({log_periods}, gap_values), {"log_period"});
      // Short periods leave a sharper posterior over log period: the fit on both says which
      // of the two the gap follows.
      p["gap_on_both"] =
          fit_json(fit_linear({entropies, log_periods}, gap_values), {"entropy", "log_period"});
      for (const auto& t : by_tertile(periodic_tasks, &TaskGap::covariate))
        p["by_entropy_tertile"].push_back(summary_json(t));
      for (auto& g : periodic_tasks) g.covariate = g.scale;
      for (const auto& t : by_tertile(periodic_tasks, &TaskGap::covariate))
        p["by_period_tertile"].push_back(summary_json(t));
    }
    nlohmann::json per_task = {
        {"kind", nlohmann::json::array()},        {"scale", nlohmann::json::array()},
        {"num_context", nlohmann::json::array()}, {"period_entropy", nlohmann::json::array()},
        {"gap", nlohmann::json::array()},         {"mean_part", nlohmann::json::array()},
        {"spread_part", nlohmann::json::array()}};
    for (const auto& g : gaps[m]) {
      per_task["kind"].push_back(g.kind);
      per_task["scale"].push_back(g.scale);
      per_task["num_context"].push_back(g.num_context);
      per_task["period_entropy"].push_back(g.covariate);
      per_task["gap"].push_back(g.gap);
      per_task["mean_part"].push_back(g.mean_part);
      per_task["spread_part"].push_back(g.spread_part);
    }
    row["per_task"] = std::move(per_task);
    rows.push_back(std::move(row));
  }
  if (a.json) {
    std::printf("%s\n", rows.dump().c_str());
    return 0;
  }
  std::printf(
      "Gap to gp-bayes (its moment-matched Gaussian), nats per target, split at gp-bayes' "
      "standard deviations into the model's mean and its spread (%lld tasks, seed %llu; "
      "± s.e. over tasks)\n",
      static_cast<long long>(a.tasks), static_cast<unsigned long long>(a.seed));
  std::printf("%-24s %-10s %6s  %-18s %-18s %-18s\n", "model", "tasks of", "tasks", "gap",
              "mean part", "spread part");
  auto cell = [](double v, double e) {
    char text[64];
    std::snprintf(text, sizeof text, "%.3f ± %.3f", v, e);
    return std::string(text);
  };
  auto print_summary = [&](const std::string& model, const std::string& kind,
                           const nlohmann::json& s) {
    std::printf("%-24s %-10s %6lld  %-18s %-18s %-18s\n", model.c_str(), kind.c_str(),
                static_cast<long long>(s["tasks"].get<int64_t>()),
                cell(s["gap"], s["gap_stderr"]).c_str(),
                cell(s["mean_part"], s["mean_part_stderr"]).c_str(),
                cell(s["spread_part"], s["spread_part_stderr"]).c_str());
  };
  for (const auto& row : rows) {
    const auto model = row["model"].get<std::string>();
    print_summary(model, "all", row["all"]);
    if (row.contains("by_task_kind")) {
      for (const auto& [kind, s] : row["by_task_kind"].items()) print_summary(model, kind, s);
    }
  }
  bool any_periodic = false;
  for (const auto& row : rows) any_periodic = any_periodic || row.contains("periodic");
  if (!any_periodic) return 0;
  std::printf(
      "\nPeriodic tasks: the gap against H, the entropy (nats) of gp-bayes' posterior over log "
      "period, and against log p (least squares over tasks; alone, then both together)\n");
  std::printf("%-24s %-24s %-20s %5s  %-20s %5s  %-20s %-20s %5s\n", "model", "gap by H tertile",
              "per nat of H", "R²", "per e-fold of p", "R²", "H (with log p)", "log p (with H)",
              "R²");
  for (const auto& row : rows) {
    if (!row.contains("periodic")) continue;
    const auto& p = row["periodic"];
    const auto& h = p["gap_on_period_entropy"];
    const auto& lp = p["gap_on_log_period"];
    const auto& both = p["gap_on_both"];
    char tertiles[64];
    std::snprintf(tertiles, sizeof tertiles, "%.3f / %.3f / %.3f",
                  p["by_entropy_tertile"][0]["gap"].get<double>(),
                  p["by_entropy_tertile"][1]["gap"].get<double>(),
                  p["by_entropy_tertile"][2]["gap"].get<double>());
    std::printf("%-24s %-24s %-20s %5.2f  %-20s %5.2f  %-20s %-20s %5.2f\n",
                row["model"].get<std::string>().c_str(), tertiles,
                cell(h["entropy"], h["entropy_stderr"]).c_str(), h["r_squared"].get<double>(),
                cell(lp["log_period"], lp["log_period_stderr"]).c_str(),
                lp["r_squared"].get<double>(),
                cell(both["entropy"], both["entropy_stderr"]).c_str(),
                cell(both["log_period"], both["log_period_stderr"]).c_str(),
                both["r_squared"].get<double>());
  }
  return 0;
}

}  // namespace

Command add_gap_bench(CLI::App& bench) {
  auto* gap = bench.add_subcommand(
      "gap",
      "Gap of each model to the Bayes ceiling on GP tasks, split into its mean's and its "
      "spread's parts, by kernel family and, on periodic tasks, against the period's entropy");
  auto args = std::make_shared<GapArguments>();
  gap->add_option("--task", args->task, "Task: " + task_names_text())->capture_default_str();
  gap->add_option("--task-option", args->task_options, "KEY=VALUE setting of the task");
  gap->add_option("--tasks", args->tasks, "Tasks")->check(at_least(1))->capture_default_str();
  gap->add_option("--seed", args->seed, "Test seed")->capture_default_str();
  gap->add_option("--models", args->models, "Comma-separated kinds or file names");
  gap->add_option("--models-dir", args->models_dir, "Folder of checkpoints to compare");
  gap->add_option("--model", args->model_files, "A model file to compare; repeatable");
  gap->add_flag("--json", args->json, "Print JSON rows (with every task's values)");
  args->runtime.precision = "fp32";
  add_runtime_options(*gap, args->runtime);
  return {gap, [args] { return bench_gap(*args); }};
}

}  // namespace npe::cli
