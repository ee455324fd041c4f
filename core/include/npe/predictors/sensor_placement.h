#pragma once
// Where should the next observation go? Greedy sensor placement by a model's own predictive
// uncertainty (Andersson et al., "Environmental sensor placement with convolutional Gaussian
// neural processes", 2023; DeepSensor's active_learning): each candidate is added to the
// context with the model's own mean there as its value, the model predicts the target region
// again, and the candidate whose addition lowers the total predictive variance most is placed;
// then the next, from the context with it.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "npe/data/task_source.h"
#include "npe/predictors/predictor.h"
#include "npe/progress.h"

namespace npe {

enum class AcquisitionScore {
  /// Drop in the summed predictive variance over the targets when the candidate is observed
  /// (its value: the model's mean there). For a GP the drop does not depend on the value, so
  /// this is the exact variance reduction.
  variance_reduction,
  /// The predictive standard deviation at the candidate itself: one forward per round instead
  /// of one per candidate.
  predictive_std,
};

struct PlacementOptions {
  /// Proposals, placed greedily one after another.
  int64_t count = 1;
  AcquisitionScore score = AcquisitionScore::variance_reduction;
  /// Candidates evaluated per batched forward.
  int64_t candidate_batch = 64;
  /// Reports candidates scored of all rounds' candidates; returning false stops (the proposals
  /// placed so far are returned).
  ProgressCallback progress;
};

struct Placement {
  /// Indices into the candidates, in the order they were placed.
  std::vector<int64_t> chosen;
  /// The score of each proposal when it was placed (variance units, or a std).
  std::vector<double> scores;
  /// The first round's score of every candidate [N] (float64): the acquisition map.
  torch::Tensor first_scores;
  /// False when the progress callback stopped the search before `count` proposals.
  bool complete = true;
};

/// Greedy placement for one task: `batch.task` (batch of one) holds the context and, as its
/// targets, the region whose uncertainty counts; `candidates` [N, D_x] the places that could be
/// observed. A GP oracle (batch.oracle, a GpOracle) is carried over to the candidates' tasks.
/// Throws InvalidInputError for a batch of more than one task, candidates of the wrong width or
/// none, and ConfigError for an oracle that cannot be carried over.
Placement place_sensors(Predictor& predictor, const TaskBatch& batch,
                        const torch::Tensor& candidates, const PlacementOptions& options = {});

/// The exact greedy variance-reduction proposals of a GP (the reference for place_sensors): from
/// the joint predictive covariance over targets and candidates, the drop in summed variance at
/// the targets of observing candidate c is sum_t cov(t, c)^2 / var(c). Needs a predictor with a
/// closed-form predictive_covariance (GP baselines); throws ConfigError otherwise.
Placement exact_gp_placement(Predictor& predictor, const TaskBatch& batch,
                             const torch::Tensor& candidates, int64_t count);

}  // namespace npe
