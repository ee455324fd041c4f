#include "npe/training/accuracy_table.h"

#include <algorithm>

#include "npe/data/gp_tasks.h"
#include "npe/errors.h"

namespace npe {

std::vector<AccuracyEntry> accuracy_baselines(const TaskSource& source,
                                              AccuracyBaselineOptions options) {
  const auto prior = gp_task_prior(source);
  if (prior) options.predictor.gp_prior = *prior;
  const auto& names = options.names;
  const bool has_oracle = source.sample(1, 0).has_oracle();
  std::vector<AccuracyEntry> entries;
  for (const auto& info : predictor_infos()) {
    if (info.capabilities.trainable) continue;
    const auto& caps = info.capabilities;
    const bool suits = caps.needs_oracle     ? has_oracle
                       : caps.needs_gp_prior ? prior.has_value()
                                             : caps.default_for_dim_x(source.dim_x());
    const bool named = std::find(names.begin(), names.end(), info.name) != names.end();
    if (names.empty() ? !suits : !named) continue;
    if (caps.needs_gp_prior && !prior) {
      throw ConfigError(info.name + " averages over the prior of GP tasks; " + source.name() +
                        " tasks have none");
    }
    const bool exact = caps.needs_oracle || caps.needs_gp_prior;
    const auto n = exact ? options.tasks : std::min(options.tasks, options.fitted_tasks);
    std::optional<BaselineRun> baseline;
    if (exact) {
      baseline = BaselineRun{info.name, source.name(),           options.task_options, options.seed,
                             n,         EvalOptions{}.batch_size};
      if (caps.needs_gp_prior) {
        baseline->settings = {
            {"bayes_grid", options.predictor.gp_bayes.grid_points},
            {"bayes_periodic_grid", options.predictor.gp_bayes.periodic_grid_points}};
      }
    }
    entries.push_back({info.name, make_predictor(info.name, options.predictor), n, baseline});
  }
  return entries;
}

AccuracyTable::AccuracyTable(const TaskSource& source, std::vector<AccuracyEntry> entries,
                             AccuracyTableOptions options)
    : source_(source), entries_(std::move(entries)), options_(std::move(options)) {
  if (entries_.empty()) throw ConfigError("an accuracy table needs at least one model");
  if (options_.shifts.empty()) throw ConfigError("an accuracy table needs at least one Δ");
  stored_.resize(entries_.size());
  for (size_t e = 0; e < entries_.size(); ++e) {
    if (options_.stored && entries_[e].baseline) {
      stored_[e] = options_.stored->find(*entries_[e].baseline);
    }
    const auto& caps = entries_[e].predictor->info().capabilities;
    if (caps.needs_oracle) oracle_ = e;
    if (caps.needs_gp_prior) ceiling_ = e;
  }
  const auto& shifts = options_.shifts;
  const auto zero = std::find(shifts.begin(), shifts.end(), 0.0);
  if (zero != shifts.end()) zero_shift_ = size_t(zero - shifts.begin());
}

bool AccuracyTable::once_per_table(size_t entry) const {
  return entries_[entry].baseline && !options_.baselines_every_shift;
}

int64_t AccuracyTable::total_tasks() const {
  int64_t total = 0;
  for (size_t e = 0; e < entries_.size(); ++e) {
    const int64_t evaluated = from_stored(e)      ? 0
                              : once_per_table(e) ? 1
                                                  : int64_t(options_.shifts.size());
    total += entries_[e].tasks * evaluated;
  }
  return total;
}

void AccuracyTable::measure(const std::function<void(int64_t, const std::string&)>& progress) {
  // results_[e][s]: entry e at shifts[s]; all on the same tasks (same seed and batch size), so
  // differences between shifts and between predictors are paired batch by batch.
  results_.assign(entries_.size(), {});
  int64_t done = 0;
  for (size_t e = 0; e < entries_.size(); ++e) {
    auto& entry = entries_[e];
    for (double shift : options_.shifts) {
      if (stored_[e]) {
        results_[e].push_back(*stored_[e]);
        continue;
      }
      if (!results_[e].empty() && once_per_table(e)) {
        results_[e].push_back(results_[e].front());
        continue;
      }
      EvalOptions eval;
      eval.num_tasks = entry.tasks;
      eval.seed = options_.seed;
      eval.shift = {shift};
      results_[e].push_back(evaluate(*entry.predictor, source_, eval, [&](const Progress& p) {
        if (progress) progress(done + p.done, entry.name);
        return true;
      }));
      done += entry.tasks;
    }
  }
}

PairedDifference AccuracyTable::change_from_zero_shift(size_t entry, size_t shift) const {
  return paired_difference(result(entry, shift), result(entry, zero_shift_.value()));
}

PairedDifference AccuracyTable::gap_to_oracle(size_t entry, size_t shift) const {
  return paired_difference(result(oracle_.value(), shift), result(entry, shift));
}

PairedDifference AccuracyTable::gap_to_ceiling(size_t entry, size_t shift) const {
  const auto& ceiling = result(ceiling_.value(), shift);
  return entries_[entry].predictor->info().capabilities.joint
             ? paired_joint_difference(ceiling, result(entry, shift))
             : paired_difference(ceiling, result(entry, shift));
}

std::map<std::string, PairedDifference> AccuracyTable::gap_to_ceiling_by_kind(
    size_t entry, size_t shift, TaskGrouping grouping) const {
  return paired_difference_by_kind(result(ceiling_.value(), shift), result(entry, shift),
                                   entries_[entry].predictor->info().capabilities.joint, grouping);
}

nlohmann::json AccuracyTable::rows(const std::string& variant) const {
  // Where the tasks have kinds (GP tasks: the kernel family), each kind's (or kind and scale's)
  // log-likelihood and gap to the ceiling: where the gap lies.
  auto by_task_kind = [&](size_t e, size_t s, TaskGrouping grouping) {
    auto kinds = ll_by_kind_json(result(e, s), grouping);
    if (ceiling_) {
      for (const auto& [kind, gap] : gap_to_ceiling_by_kind(e, s, grouping)) {
        kinds[kind]["gap_to_ceiling"] = gap.mean;
        kinds[kind]["gap_to_ceiling_stderr"] = gap.standard_error;
        kinds[kind]["gap_to_ceiling_tasks"] = gap.num_tasks;
      }
    }
    return kinds;
  };
  const auto& shifts = options_.shifts;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t e = 0; e < entries_.size(); ++e) {
    const auto& entry = entries_[e];
    for (size_t s = 0; s < shifts.size(); ++s) {
      const auto& r = result(e, s);
      auto row = to_json(r);
      row.update({{"model", entry.name},
                  {"kind", entry.predictor->info().name},
                  {"task", source_.name()},
                  {"shift", shifts[s]},
                  {"batch_size", EvalOptions{}.batch_size}});
      if (!variant.empty()) row["variant"] = variant;
      row["per_batch"] = per_batch_json(r);
      if (auto per_task = per_task_json(r); !per_task.is_null()) {
        row["per_task"] = std::move(per_task);
        row["by_task_kind"] = by_task_kind(e, s, TaskGrouping::kind);
        if (!r.task_scale.empty()) {
          row["by_task_kind_and_scale"] = by_task_kind(e, s, TaskGrouping::kind_and_scale);
        }
      }
      if (entry.baseline) {
        row.update(entry.baseline->to_json());
        if (from_stored(e)) {
          row["stored_in"] = options_.stored->file().string();
        } else if (once_per_table(e)) {
          row["evaluated_at_shift"] = shifts.front();
        }
      }
      if (zero_shift_) {
        const auto d = change_from_zero_shift(e, s);
        row["ll_change_vs_shift0"] = d.mean;
        row["paired_stderr_vs_shift0"] = d.standard_error;
      }
      if (oracle_) {
        const auto gap = gap_to_oracle(e, s);
        row["gap_to_oracle"] = gap.mean;
        row["gap_to_oracle_stderr"] = gap.standard_error;
        row["gap_to_oracle_tasks"] = gap.num_tasks;
      }
      if (ceiling_) {
        const auto gap = gap_to_ceiling(e, s);
        row["gap_to_ceiling"] = gap.mean;
        row["gap_to_ceiling_stderr"] = gap.standard_error;
        row["gap_to_ceiling_tasks"] = gap.num_tasks;
        row["ceiling"] = entry.predictor->info().capabilities.joint ? "joint" : "gaussian";
      }
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace npe
