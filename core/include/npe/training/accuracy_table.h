#pragma once
// The accuracy table: every chosen predictor's log-likelihood on the same held-out tasks at each
// translation Δ, paired batch by batch, with the gaps to the GP oracle and to the Bayes ceiling
// (gp-bayes) where the tasks have them. `npe bench accuracy` prints it; its JSON rows are what
// BENCHMARKS.md and earlier runs' stored baselines (stored_baselines.h) are made of.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/data/task_source.h"
#include "npe/predictors/predictor.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/training/evaluation.h"
#include "npe/training/stored_baselines.h"

namespace npe {

/// One row of the table: a predictor evaluated on `tasks` tasks at every Δ.
struct AccuracyEntry {
  std::string name;
  std::unique_ptr<Predictor> predictor;
  int64_t tasks = 0;
  /// The exact GP baselines (oracle, Bayes): what decides their evaluation, to store and reuse.
  std::optional<BaselineRun> baseline;
};

/// How the table's baselines are chosen and built.
struct AccuracyBaselineOptions {
  /// Predictor names to compare; empty: the baselines that suit the tasks.
  std::vector<std::string> names;
  /// Tasks of the exact baselines (every Δ's) and of the fitted GPs (fewer: they are slow).
  int64_t tasks = 4096, fitted_tasks = 256;
  uint64_t seed = 0;
  /// The task options, as the stored rows record them.
  nlohmann::json task_options = nlohmann::json::object();
  PredictorOptions predictor;
};

/// The baselines of a table on `source`'s tasks: the oracle where the tasks carry one, the
/// Bayes-optimal GP where their prior is known, the fitted GP whose kernel suits D_x; or the
/// baselines `options.names` names (others in it are ignored here). Throws ConfigError for
/// gp-bayes named on tasks without a GP prior.
std::vector<AccuracyEntry> accuracy_baselines(const TaskSource& source,
                                              AccuracyBaselineOptions options);

struct AccuracyTableOptions {
  std::vector<double> shifts = {0.0};
  uint64_t seed = 0;
  /// Where the exact baselines' rows may come from instead of being evaluated.
  const StoredBaselines* stored = nullptr;
  /// Evaluate the exact baselines at every Δ (default: at the first only; their kernels are
  /// stationary, so nothing they predict depends on Δ).
  bool baselines_every_shift = false;
};

class AccuracyTable {
 public:
  /// Looks up the stored baselines (throws DataError, from StoredBaselines::find, where a stored
  /// row was measured differently). Throws ConfigError when there are no entries or shifts.
  AccuracyTable(const TaskSource& source, std::vector<AccuracyEntry> entries,
                AccuracyTableOptions options);

  /// Task evaluations `measure` will run, for a progress bar.
  int64_t total_tasks() const;
  /// Evaluates every entry at every Δ (stored and once-per-table rows reused); `progress`
  /// gets the tasks done so far and the entry being evaluated.
  void measure(const std::function<void(int64_t done, const std::string& name)>& progress = {});

  const std::vector<AccuracyEntry>& entries() const { return entries_; }
  const std::vector<double>& shifts() const { return options_.shifts; }
  const EvalResult& result(size_t entry, size_t shift) const { return results_[entry][shift]; }
  /// Where entry's numbers come from: the stored file, measured at the first Δ only, or at
  /// every Δ.
  bool from_stored(size_t entry) const { return stored_[entry].has_value(); }
  bool once_per_table(size_t entry) const;

  /// The entries of the oracle and the ceiling, and the index of Δ = 0, where there are.
  std::optional<size_t> oracle() const { return oracle_; }
  std::optional<size_t> ceiling() const { return ceiling_; }
  std::optional<size_t> zero_shift() const { return zero_shift_; }

  /// LL(Δ) − LL(0), paired; needs zero_shift().
  PairedDifference change_from_zero_shift(size_t entry, size_t shift) const;
  /// LL(oracle) − LL(entry), paired; needs oracle().
  PairedDifference gap_to_oracle(size_t entry, size_t shift) const;
  /// The ceiling of a model with Gaussian marginals is gp-bayes' moment-matched Gaussian; that
  /// of a joint model, gp-bayes' mixture of joint Gaussians (the joint log-likelihoods). Needs
  /// ceiling().
  PairedDifference gap_to_ceiling(size_t entry, size_t shift) const;
  std::map<std::string, PairedDifference> gap_to_ceiling_by_kind(
      size_t entry, size_t shift, TaskGrouping grouping = TaskGrouping::kind) const;

  /// One JSON object per entry and Δ: the result (to_json, per batch and per task), the gaps,
  /// the baselines' settings and where their numbers come from; `variant` labels a task variant.
  nlohmann::json rows(const std::string& variant = {}) const;

 private:
  const TaskSource& source_;
  std::vector<AccuracyEntry> entries_;
  AccuracyTableOptions options_;
  std::vector<std::optional<EvalResult>> stored_;
  std::vector<std::vector<EvalResult>> results_;
  std::optional<size_t> oracle_, ceiling_, zero_shift_;
};

}  // namespace npe
