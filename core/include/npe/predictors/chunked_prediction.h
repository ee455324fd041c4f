#pragma once
// Predictions over more targets than fit in memory at once (a whole picture, a grid, a file of
// points): the targets go to the predictor a chunk at a time.

#include <cstdint>

#include "npe/ground/prediction.h"
#include "npe/ground/task.h"
#include "npe/predictors/predictor.h"

namespace npe {

/// The predictive marginals of `task`'s targets (yt unused), at most
/// `max_targets` per call: each target's marginal depends on the context alone, so chunks bound
/// memory without changing a number. Joint predictives (TNP-A conditions targets on each other)
/// see every target at once. Mean and stddev [B, N_t, D_y] float32 on the CPU. Throws what
/// validate_task and the predictor throw; ConfigError for max_targets < 1.
Prediction predict_in_chunks(Predictor& predictor, const Task& task, int64_t max_targets);

}  // namespace npe
