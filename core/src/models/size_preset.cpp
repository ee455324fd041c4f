#include "npe/models/size_preset.h"

#include "npe/models/model_option_groups.h"

namespace npe {
namespace {

template <typename T>
void set(T& field, const std::optional<T>& value) {
  if (value) field = *value;
}

}  // namespace

void SizePreset::apply_to(ModelConfig& c) const {
  if (auto* g = c.find_options<TokenOptions>()) set(g->dim_model, dim_model);
  if (auto* g = c.find_options<TransformerOptions>()) {
    set(g->dim_model, dim_model);
    set(g->num_layers, num_layers);
    set(g->num_heads, num_heads);
    set(g->head_dim, head_dim);
  }
  if (auto* g = c.find_options<TeAttentionOptions>()) set(g->pairwise_width, pairwise_width);
  if (auto* g = c.find_options<PseudoTokenOptions>()) set(g->num_pseudo_tokens, num_pseudo_tokens);
  if (auto* g = c.find_options<ConvCnpOptions>()) {
    set(g->conv_channels, conv_channels);
    set(g->kernel_size, kernel_size);
    set(g->unet_depth, unet_depth);
    set(g->points_per_unit, points_per_unit);
  }
  if (auto* g = c.find_options<ConvCnp2dOptions>()) {
    set(g->conv_channels, conv_channels);
    set(g->kernel_size, kernel_size);
    set(g->cnn_layers, cnn_layers);
  }
}

}  // namespace npe
