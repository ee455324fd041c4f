#pragma once
// What a model saw in training, read from its checkpoint's task, and where a scene leaves it:
// the guardrails the explorer tabs draw ("outside training: 80 context points > 64"). A
// translation-equivariant model is never flagged for a shift of its inputs: that it does not
// care is the lesson the tabs teach. Models without a recorded task (TorchScript files,
// imported ones) have no known regime.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npe {

struct TrainingRegime {
  /// false: the checkpoint records no task this knows (nothing can be said).
  bool known = false;
  bool translation_equivariant = false;
  /// The context's first input in training tasks, in the model's units (1-D tasks, gp1d and
  /// series: x, what the tabs draw as the training range; gridded tasks, era5: the latitude
  /// coordinate, 0 at the split latitude, one side of which trained).
  double context_low = 0.0, context_high = 0.0;
  /// How a first input outside [context_low, context_high] is said; empty: "context beyond
  /// [low, high]".
  std::string beyond;
  /// The range of context counts in training.
  int64_t min_context = 0, max_context = 0;
  /// The largest translation of the data in training, per component (translated-image tasks:
  /// how far pictures were moved on the canvas); infinite where training said nothing of it.
  double max_shift = std::numeric_limits<double>::infinity();
};

/// The regime of a model trained on `task` (TaskSource::to_json(), as checkpoints store it:
/// gp1d, series, era5, image and pictures tasks); unknown for other or missing tasks.
TrainingRegime training_regime(const nlohmann::json& task, bool translation_equivariant);

/// Where a scene (the first input of each context point, in the model's units, as the model
/// sees it, and the translation Δ of its data) leaves the regime, one short phrase each ("80
/// context points > 64", "context beyond [-3, 3]", "Δ beyond the training translations: |Δ| =
/// 9 > 4": the last two only for models that are not translation equivariant); empty when it
/// stays inside or nothing is known.
std::vector<std::string> regime_warnings(const TrainingRegime& regime,
                                         const std::vector<double>& context_x,
                                         const std::vector<double>& shift = {});

}  // namespace npe
