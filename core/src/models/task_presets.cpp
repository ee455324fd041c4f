#include "npe/models/task_presets.h"

#include <algorithm>

#include "npe/data/era5_tasks.h"
#include "npe/data/image_tasks.h"
#include "npe/data/picture_tasks.h"
#include "npe/models/model_registry.h"
#include "npe/models/size_preset.h"

namespace npe {
namespace {

// half_side: half a picture's side in pixels (14 for Fashion-MNIST's 28).
void adapt_to_images(ModelConfig& c, const std::string& size, double half_side) {
  // Paper F.2: D_z = 32 for every model and a homoscedastic Gaussian likelihood. Each setting
  // applies to the kinds that have the field.
  c.heteroscedastic = false;
  SizePreset preset;
  preset.dim_model = 32;
  preset.pairwise_width = 32;
  if (size == "paper") {
    preset.num_pseudo_tokens = 64;
    preset.conv_channels = 64;
    preset.cnn_layers = 5;
  } else {
    preset.num_layers = 3;
    preset.num_heads = 4;
    preset.head_dim = 8;
    preset.pairwise_width = 16;
    preset.num_pseudo_tokens = 32;
    preset.conv_channels = 32;
    preset.cnn_layers = 5;
    preset.kernel_size = 5;
  }
  preset.apply_to(c);
  // Pixel coordinates span about ±2 pictures' sides (more once translated); models that see x
  // directly work in units of half a picture. The on-grid ConvCNP needs whole-pixel
  // coordinates.
  if (!model_info(c.kind).on_grid) c.input_scale = 1.0 / half_side;
}

void adapt_to_era5(ModelConfig& c, const std::string& size, const Era5TaskSource& task) {
  apply_era5_size_preset(c, size);
  // Windows span 15 cells: models that see x directly work in units of half a window. The
  // on-grid ConvCNP needs whole-cell coordinates.
  if (!model_info(c.kind).on_grid) c.input_scale = 1.0 / 8.0;
  c.dim_features = task.place_features().count();
  // The last coordinate is time (hours): models that treat it apart from space say how.
  declare_time_coordinate(c);
}

}  // namespace

void apply_era5_size_preset(ModelConfig& c, const std::string& size) {
  // Paper F.4: D_z = 32 for every model (the pairwise MLPs of the TE attention are D_z wide, as
  // in F.1), M = 128 pseudo-tokens. The small size keeps CPU training affordable on tasks of
  // about 1,100 points. Checkpoints keep the sizes they were trained with.
  SizePreset preset;
  if (size == "paper") {
    preset.dim_model = 32;
    preset.pairwise_width = 32;
    preset.num_pseudo_tokens = 128;
  } else {
    preset.dim_model = 64;
    preset.num_layers = 3;
    preset.num_heads = 4;
    preset.head_dim = 16;
    preset.pairwise_width = 32;
    preset.num_pseudo_tokens = 32;
    preset.conv_channels = 32;
    preset.cnn_layers = 4;
    preset.kernel_size = 5;
  }
  preset.apply_to(c);
}

void adapt_to_task(ModelConfig& config, const std::string& size, const TaskSource& task) {
  if (dynamic_cast<const ImageTaskSource*>(&task)) {
    adapt_to_images(config, size, 14.0);
  } else if (const auto* pictures = dynamic_cast<const PictureTaskSource*>(&task)) {
    adapt_to_images(config, size, std::max(1.0, pictures->config().size / 2.0));
  } else if (const auto* era5 = dynamic_cast<const Era5TaskSource*>(&task)) {
    adapt_to_era5(config, size, *era5);
  }
}

}  // namespace npe
