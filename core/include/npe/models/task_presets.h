#pragma once
// The model settings a task's protocol asks for at a named size: the paper's image models use
// D_z = 32 and a homoscedastic likelihood (Appendix F.2); the ERA5 models F.4's sizes, the
// task's place features and its time coordinate. Here, with the models, which know the tasks;
// the tasks (data/) know nothing of models.

#include <string>

#include "npe/models/model_config.h"

namespace npe {

class TaskSource;

/// The ERA5 models' sizes without the input layout (what adapt_to_task adds: the place
/// features, the time coordinate, the input scale). "paper" is Appendix F.4: D_z = 32 for every
/// model, M = 128 pseudo-tokens.
void apply_era5_size_preset(ModelConfig& config, const std::string& size);

/// Applies `task`'s settings for `size` ("small" or "paper"; "medium" is small's with the
/// paper's transformer, added after this) to a generic size preset. Tasks without settings of
/// their own (gp1d) leave it as it is.
void adapt_to_task(ModelConfig& config, const std::string& size, const TaskSource& task);

}  // namespace npe
