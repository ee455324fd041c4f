#pragma once
// "Where should the next observation go?" as a job of the prediction worker: one model's greedy
// sensor placement (npe/predictors/sensor_placement.h) for a tab's current context, with the
// acquisition score of every candidate for the tab to draw. Both the 1-D and the Maps tab ask
// for it through PredictionService::request_placement.

#include <cstdint>
#include <vector>

#include <QString>

#include <torch/types.h>

#include "common/model_entry.h"
#include "npe/data/task_source.h"
#include "npe/predictors/sensor_placement.h"

namespace npe::widgets {

struct PlacementRequest {
  uint64_t serial = 0;
  /// One task: the context, and as targets the region whose uncertainty counts.
  TaskBatch batch;
  /// [N, D_x] the places that could be observed, in the task's coordinates.
  torch::Tensor candidates;
  ModelEntry model;
  int64_t count = 1;
  AcquisitionScore score = AcquisitionScore::variance_reduction;
};

struct PlacementResult {
  uint64_t serial = 0;
  QString model_id;
  /// [N] the first round's score of every candidate (float64; the acquisition layer), and the
  /// candidates it scores.
  torch::Tensor scores, candidates;
  /// The proposals in the order placed: indices into the candidates, their scores, and the
  /// value the model expects at each (its mean, the pseudo-observation the next round saw).
  std::vector<int64_t> chosen;
  std::vector<double> chosen_scores, chosen_means;
  bool cancelled = false;  ///< stopped before `count` proposals (a newer edit, or Cancel)
  QString error;           ///< non-empty when the model failed
  double milliseconds = 0.0;
};

/// Runs on the worker thread. `progress(done, total)` is called as candidates are scored;
/// returning false stops the search (the result is then marked cancelled).
PlacementResult compute_placement(const PlacementRequest& request,
                                  const std::function<bool(int64_t, int64_t)>& progress = {});

}  // namespace npe::widgets
