#pragma once
// The 1-D tab's predictions as a table (File ▸ Export predictions): the plotted grid and the
// held-out points, with each shown model's mean and standard deviation.

#include "npe/data/point_table.h"

namespace npe::widgets {

class ModelList;
struct PredictionResult;

/// Columns x, y (the truth at held-out points, else NaN), held_out (1 for the held-out points,
/// 0 on the plotted grid) and "<model>_mean", "<model>_std" for each model of `models` the
/// round predicted. No columns when the round has no grid.
PointTable function_prediction_table(const PredictionResult& result, const ModelList& models);

}  // namespace npe::widgets
