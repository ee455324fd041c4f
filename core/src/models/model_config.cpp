#include "npe/models/model_config.h"

#include "npe/data/task_source.h"
#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/json_numbers.h"
#include "npe/models/model_registry.h"

namespace npe {

// One list of (name, member) pairs drives both directions of the JSON mapping, so a new field
// cannot be saved without being loaded.
// clang-format off
#define NPE_MODEL_CONFIG_FIELDS(X) \
  X(kind) \
  X(dim_x) \
  X(dim_y) \
  X(dim_features) \
  X(dim_model) \
  X(num_layers) \
  X(num_heads) \
  X(head_dim) \
  X(pairwise_width) \
  X(update_locations) \
  X(share_layer_weights) \
  X(num_pseudo_tokens) \
  X(pseudo_locations) \
  X(heteroscedastic) \
  X(min_stddev) \
  X(points_per_unit) \
  X(conv_channels) \
  X(kernel_size) \
  X(unet_depth) \
  X(cnn_layers) \
  X(input_scale) \
  X(max_grid_points) \
  X(covariance) \
  X(covariance_layers) \
  X(projection_layers) \
  X(projection_dim) \
  X(num_permutations) \
  X(bias_features) \
  X(time_bias_features)
// clang-format on

nlohmann::json ModelConfig::to_json() const {
  nlohmann::json json;
#define NPE_WRITE(field) json[#field] = field;
  NPE_MODEL_CONFIG_FIELDS(NPE_WRITE)
#undef NPE_WRITE
  return json;
}

ModelConfig ModelConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError("model configuration must be a JSON object");
  check_json_numbers(json, "model configuration");
  ModelConfig config;
#define NPE_READ(field) read_json_field(json, #field, config.field, "model configuration");
  NPE_MODEL_CONFIG_FIELDS(NPE_READ)
#undef NPE_READ
  return config;
}

const std::vector<std::string>& model_sizes() {
  static const std::vector<std::string> sizes = {"small", "medium", "paper"};
  return sizes;
}

namespace {

// The medium size is the small one with the paper's transformer (5 layers of 8 heads x 16): the
// depth and heads are what draw a sharp picture on CPU-trainable budgets, while the pairwise
// MLPs, pseudo-tokens and CNN widths (the cost) stay small. Kinds without a transformer (the
// ConvCNPs) are as small.
void use_papers_transformer(ModelConfig& c) {
  c.num_layers = 5;
  c.num_heads = 8;
  c.head_dim = 16;
}

}  // namespace

ModelConfig default_model_config(const std::string& kind, const std::string& size, int64_t dim_x,
                                 int64_t dim_y) {
  const auto& spec = model_spec(kind);  // throws for unknown kinds
  if (size == "medium") {
    auto c = default_model_config(kind, "small", dim_x, dim_y);
    use_papers_transformer(c);
    return c;
  }
  ModelConfig c;
  c.kind = kind;
  c.dim_x = dim_x;
  c.dim_y = dim_y;
  if (size == "paper") {
    if (spec.paper_size) spec.paper_size(c);
    return c;
  }
  if (size != "small") {
    throw ConfigError("unknown size '" + size + "' (known: small, medium, paper)");
  }
  // CPU-trainable sizes: narrower tokens, fewer layers, and above all narrow pairwise MLPs,
  // which dominate the cost of the translation-equivariant models.
  c.dim_model = 64;
  c.num_layers = 3;
  c.num_heads = 4;
  c.head_dim = 16;
  c.pairwise_width = 32;
  c.num_pseudo_tokens = 16;
  c.conv_channels = 32;
  return c;
}

ModelConfig default_model_config(const std::string& kind, const std::string& size,
                                 const TaskSource& task) {
  const bool medium = size == "medium";
  auto config = default_model_config(kind, medium ? "small" : size, task.dim_x(), task.dim_y());
  task.adapt_model_config(config, medium ? "small" : size);
  if (medium) use_papers_transformer(config);
  return config;
}

}  // namespace npe
