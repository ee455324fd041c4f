#include "npe/models/model_config.h"

#include "npe/data/task_source.h"
#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/json_numbers.h"
#include "npe/models/model_option_groups.h"
#include "npe/models/model_registry.h"
#include "npe/models/size_preset.h"
#include "npe/models/task_presets.h"

namespace npe {

namespace {
const char* const kConfigWhat = "model configuration";
}  // namespace

ModelConfig::ModelConfig(std::string kind_, int64_t dim_x_, int64_t dim_y_)
    : kind(std::move(kind_)), dim_x(dim_x_), dim_y(dim_y_) {
  m_options = model_spec(kind).make_options();  // throws for unknown kinds
}

ModelConfig::ModelConfig(const ModelConfig& other)
    : kind(other.kind),
      dim_x(other.dim_x),
      dim_y(other.dim_y),
      dim_features(other.dim_features),
      heteroscedastic(other.heteroscedastic),
      min_stddev(other.min_stddev),
      input_scale(other.input_scale),
      centre_per_task(other.centre_per_task),
      m_options(other.m_options ? other.m_options->clone() : nullptr) {}

ModelConfig& ModelConfig::operator=(const ModelConfig& other) {
  if (this != &other) *this = ModelConfig(other);
  return *this;
}

ModelConfig::~ModelConfig() = default;

void ModelConfig::throw_missing_group() const {
  throw ConfigError(kind.empty()
                        ? "model configuration: no model kind"
                        : "model configuration: the " + kind + " model has no such option group");
}

nlohmann::json ModelConfig::to_json() const {
  nlohmann::json json = m_options ? options_to_json(*m_options) : nlohmann::json::object();
  json["kind"] = kind;
  json["dim_x"] = dim_x;
  json["dim_y"] = dim_y;
  json["dim_features"] = dim_features;
  json["heteroscedastic"] = heteroscedastic;
  json["min_stddev"] = min_stddev;
  json["input_scale"] = input_scale;
  json["centre_per_task"] = centre_per_task;
  return json;
}

ModelConfig ModelConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError("model configuration must be a JSON object");
  check_json_numbers(json, kConfigWhat);
  std::string kind;
  read_json_field(json, "kind", kind, kConfigWhat);
  ModelConfig config(kind);
  read_json_field(json, "dim_x", config.dim_x, kConfigWhat);
  read_json_field(json, "dim_y", config.dim_y, kConfigWhat);
  read_json_field(json, "dim_features", config.dim_features, kConfigWhat);
  read_json_field(json, "heteroscedastic", config.heteroscedastic, kConfigWhat);
  read_json_field(json, "min_stddev", config.min_stddev, kConfigWhat);
  read_json_field(json, "input_scale", config.input_scale, kConfigWhat);
  read_json_field(json, "centre_per_task", config.centre_per_task, kConfigWhat);
  options_from_json(*config.m_options, json);
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
  if (auto* transformer = c.find_options<TransformerOptions>()) {
    transformer->num_layers = 5;
    transformer->num_heads = 8;
    transformer->head_dim = 16;
  }
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
  ModelConfig c(kind, dim_x, dim_y);
  if (size == "paper") {
    if (spec.paper_size) spec.paper_size(c);
    return c;
  }
  if (size != "small") {
    throw ConfigError("unknown size '" + size + "' (known: small, medium, paper)");
  }
  // CPU-trainable sizes: narrower tokens, fewer layers, and above all narrow pairwise MLPs,
  // which dominate the cost of the translation-equivariant models.
  SizePreset small;
  small.dim_model = 64;
  small.num_layers = 3;
  small.num_heads = 4;
  small.head_dim = 16;
  small.pairwise_width = 32;
  small.num_pseudo_tokens = 16;
  small.conv_channels = 32;
  small.apply_to(c);
  return c;
}

ModelConfig default_model_config(const std::string& kind, const std::string& size,
                                 const TaskSource& task) {
  const bool medium = size == "medium";
  auto config = default_model_config(kind, medium ? "small" : size, task.dim_x(), task.dim_y());
  adapt_to_task(config, medium ? "small" : size, task);
  if (medium) use_papers_transformer(config);
  return config;
}

std::string matching_model_size(const ModelConfig& config, const TaskSource& task) {
  const auto json = config.to_json();
  std::vector<nlohmann::json> presets;
  for (const auto& size : model_sizes()) {
    presets.push_back(default_model_config(config.kind, size, task).to_json());
  }
  // A size is what the presets differ in (widths, depths, heads); other options (a σ per pixel,
  // the location updates) are choices on top of a size, not another size.
  const auto differs_between_sizes = [&presets](const std::string& key) {
    for (const auto& preset : presets) {
      if (preset.value(key, nlohmann::json()) != presets.front().value(key, nlohmann::json()))
        return true;
    }
    return false;
  };
  for (size_t i = 0; i < presets.size(); ++i) {
    bool same = true;
    for (const auto& [key, value] : presets[i].items()) {
      if (differs_between_sizes(key) && json.value(key, nlohmann::json()) != value) same = false;
    }
    if (same) return model_sizes()[i];
  }
  return "custom";
}

}  // namespace npe
