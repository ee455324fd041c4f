#pragma once
// What the big map shows for a layer: the truth, or one model's mean (with the truth around
// the target window), standard deviation or error, with its colour range, palette and title.

#include <QRect>
#include <QString>

#include "maps/map_view.h"

namespace npe::widgets {

struct ModelLayer {
  QString model_name;
  /// "mean", "stddev", "error" or "acquisition" (a sensor placement's score: `mean` holds it,
  /// in `unit`).
  QString kind;
  /// The model's maps over the target window ([w, w]; °C and K, NaN where there is no data);
  /// undefined while the model is still computing.
  torch::Tensor mean, stddev;
  QString unit;
};

/// Sets scene.values, low, high, palette, colour_title and title (without the time) for the
/// truth (`truth`: [rows, cols] °C of the whole grid, titled `truth_title`, the variable's long
/// name) or, with `model`, that model's layer in `window`.
void set_layer(MapScene& scene, const torch::Tensor& truth, const QString& truth_title,
               const QRect& window, const ModelLayer* model);

}  // namespace npe::widgets
