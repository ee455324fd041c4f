#pragma once
// The model's task for what the Images tab shows: a picture on the canvas, the pixels the user
// chose as context, and the translation Δ that moves both. Built here, in core, so the tab only
// describes its scene and the rules (context coordinates off the canvas, held-out pixels) are
// tested without Qt.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "npe/ground/task.h"

namespace npe {

struct ImageScene {
  /// The picture, grey [H, W] or colour [H, W, C] float, placed at the centre of the canvas at
  /// Δ = 0.
  torch::Tensor picture;
  /// Side of the square canvas in pixels.
  int64_t canvas = 56;
  /// Context pixels, as row-major indices of the canvas at Δ = 0: they move with the picture.
  std::vector<int64_t> context;
  /// Δ: columns (h) and rows (v) the picture and its context move.
  int64_t h = 0, v = 0;
};

/// The task of a scene (batch of one) and the held-out pixels the tab scores.
struct ImageSceneTask {
  /// Context: each context pixel at its translated place (even off the canvas: the picture
  /// and its context move together) with its value. Targets: every canvas pixel, row-major,
  /// inputs (row - canvas/2, column - canvas/2). yt is undefined.
  Task task;
  /// Canvas pixels that are not context: [N_held] long; their shown values [N_held, C].
  torch::Tensor held_out_index, held_out_y;
};

/// Throws DataError for a context index outside the canvas or a picture larger than it.
ImageSceneTask scene_task(const ImageScene& scene);

}  // namespace npe
