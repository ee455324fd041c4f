#pragma once
// How much of a large context each model of an explorer round sees, so that no model keeps the
// tab waiting: a model whose estimated time for the whole context exceeds the round's budget
// predicts from an evenly spread subset of it (the tab says so, e.g. "on 4,096 of 200,000
// points"), the largest subset whose estimate fits. Estimates are the predictor's FLOP count
// (Predictor::prediction_flops) over a speed learnt, per model, from the rounds it ran.
//
// Why subsets for every family rather than deferring slow models: each family's prediction from
// a few thousand evenly spread points is still the picture the user asked for (the neural
// processes were trained on at most a few hundred; a GP on a subset of data is the textbook
// approximation), while a deferred model shows nothing at all until asked.

#include <cstdint>
#include <map>
#include <mutex>

#include <QString>

#include "npe/ground/task.h"
#include "npe/models/flops.h"
#include "npe/predictors/predictor.h"

namespace npe::widgets {

/// Time one model may take in one round: while the user edits (the view follows the mouse)
/// and once they pause (the settled round, drawn at full resolution).
inline constexpr double kLiveBudgetMs = 500.0;
inline constexpr double kSettledBudgetMs = 3000.0;
/// Subsets never go below this (or the whole context, when smaller): below it the picture would
/// stop being the user's data.
inline constexpr int64_t kMinimumContext = 256;

/// Each model's speed in FLOPs per millisecond, learnt from its rounds (thread-safe: the models
/// of a round report from their lanes).
class CostCalibration {
 public:
  /// Speed assumed before a model has run a round that says more: a single core's sustained
  /// speed on small products, below this project's measured 20-60 GFLOP/s so that the first
  /// round errs towards a smaller subset.
  static constexpr double kDefaultFlopsPerMs = 2.0e6;
  /// Fixed cost of a call (tensor set-up, small kernels), whatever the size.
  static constexpr double kOverheadMs = 2.0;

  /// Estimated milliseconds of `flops` of work for the model `id` (NaN flops: NaN).
  double estimate_ms(const QString& id, double flops) const;
  /// A measured call: `flops` of estimated work took `milliseconds` (> 0).
  void record(const QString& id, double flops, double milliseconds);
  double flops_per_ms(const QString& id) const;

 private:
  mutable std::mutex m_mutex;
  std::map<QString, double> m_flops_per_ms;
};

struct ContextPlan {
  int64_t context = 0;  ///< context points the model sees
  int64_t total = 0;    ///< context points the task has
  double flops = 0.0;   ///< estimated work at `context` (NaN: unknown)
  double estimated_ms = 0.0;
  double whole_ms = 0.0;  ///< the estimate for the whole context
  bool subset() const { return context < total; }
};

/// The context `predictor` (model `id`) should see for a task of this shape: all of it when its
/// estimate fits `budget_ms` and the predictor accepts that many, else the largest number that
/// does (at least kMinimumContext).
ContextPlan plan_context(const CostCalibration& calibration, const QString& id,
                         const Predictor& predictor, const BatchShape& shape, double budget_ms);

/// `count` context points of every task in the batch, evenly spread over the context's order
/// (point floor(i * Nc / count) for i = 0 .. count - 1): deterministic, so that successive
/// rounds of a live edit see the same subset, and spread over the data as the user laid it out.
Task subsample_context(const Task& task, int64_t count);

/// The extent (largest max - min over input dimensions) of a task's context and targets, for
/// models whose work grows with it (ConvCNP's grid).
double input_span(const Task& task);

/// "on 4,096 of 200,000 points" (empty when the model saw the whole context).
QString describe_subset(const ContextPlan& plan);

}  // namespace npe::widgets
