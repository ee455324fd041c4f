#pragma once
// What the images tab reads out of a prediction round: the table File ▸ Export predictions
// writes and the line shown for the pixel under the mouse.

#include <vector>

#include <QString>

#include <torch/types.h>

#include "npe/data/point_table.h"

namespace npe::widgets {

class ModelList;
struct PredictionResult;

/// The canvas as shown, at the current translation.
struct ShownCanvas {
  /// True values in [0, 1]: grey [size, size] or colour [size, size, C].
  torch::Tensor truth;
  /// Per shown pixel (row-major): whether it is a context pixel.
  std::vector<bool> context;
  int size = 0;
};

/// One row per shown pixel: row, column, truth, context (0/1) and each model's mean and std, a
/// column per channel for colour (truth_r, truth_g, truth_b, …); models without a full-canvas
/// prediction of the picture's channels are left out, and without any the table is empty.
PointTable image_prediction_table(const ShownCanvas& canvas, const PredictionResult& round,
                                  const ModelList& models);

/// "pixel (r, c): true value v (context) · model mean ± std …"; empty outside the canvas.
QString describe_pixel(const ShownCanvas& canvas, const PredictionResult& round,
                       const ModelList& models, int row, int column);

}  // namespace npe::widgets
