#pragma once
// Size presets written against the option groups: a field applies to every kind whose groups
// have it (dim_model: the CNPs' TokenOptions and every transformer's; conv_channels and
// kernel_size: both ConvCNPs), and a misspelt field does not compile. Unset fields keep the
// kind's value. Used by the "small" and "medium" sizes, the tasks' presets (images, ERA5), the
// training form's custom size and the tests' tiny models.

#include <cstdint>
#include <optional>

#include "npe/models/model_config.h"

namespace npe {

struct SizePreset {
  std::optional<int64_t> dim_model;          // TokenOptions, TransformerOptions
  std::optional<int64_t> num_layers;         // TransformerOptions
  std::optional<int64_t> num_heads;          // TransformerOptions
  std::optional<int64_t> head_dim;           // TransformerOptions
  std::optional<int64_t> pairwise_width;     // TeAttentionOptions
  std::optional<int64_t> num_pseudo_tokens;  // PseudoTokenOptions
  std::optional<int64_t> conv_channels;      // ConvCnpOptions, ConvCnp2dOptions
  std::optional<int64_t> kernel_size;        // ConvCnpOptions, ConvCnp2dOptions
  std::optional<int64_t> cnn_layers;         // ConvCnp2dOptions
  std::optional<int64_t> unet_depth;         // ConvCnpOptions
  std::optional<double> points_per_unit;     // ConvCnpOptions

  /// Sets the preset's fields in every group of `config` that has them. The values' ranges are
  /// checked where every configuration's are, when the model is made (make_model).
  void apply_to(ModelConfig& config) const;
};

}  // namespace npe
