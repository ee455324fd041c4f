#include "npe/models/model_registry.h"

#include <cmath>

#include "models/bsatnp.h"
#include "models/cnp.h"
#include "models/convcnp.h"
#include "models/pttnp.h"
#include "models/rcnp.h"
#include "models/tnp.h"
#include "models/tnpa.h"
#include "models/tnpd.h"
#include "models/tnpnd.h"
#include "npe/errors.h"

namespace npe {
namespace {

// Every model kind, one line each, in display order; the specifications live with the models.
const std::vector<ModelSpec>& model_specs() {
  static const std::vector<ModelSpec> specs = {
      cnp_spec(),     rcnp_spec(),    tnp_spec(),       pttnp_spec(), tetnp_spec(),
      tepttnp_spec(), convcnp_spec(), convcnp2d_spec(), tnpd_spec(),  tnpnd_spec(),
      tnpa_spec(),    tetnpnd_spec(), bsatnp_spec(),
  };
  return specs;
}

// The fields every model has, recorded with any kind's own options.
const std::vector<std::string>& common_options() {
  static const std::vector<std::string> names = {
      "kind", "dim_x", "dim_y", "dim_features", "heteroscedastic", "min_stddev", "input_scale"};
  return names;
}

std::string known_kinds() {
  std::string list;
  for (const auto& info : model_infos()) list += (list.empty() ? "" : ", ") + info.kind;
  return list;
}

void check_sizes(const ModelConfig& c) {
  auto positive = [&](int64_t v, const char* name) {
    if (v < 1) throw ConfigError(std::string("model configuration: ") + name + " must be >= 1");
  };
  positive(c.dim_x, "dim_x");
  positive(c.dim_y, "dim_y");
  positive(c.dim_model, "dim_model");
  positive(c.num_layers, "num_layers");
  positive(c.num_heads, "num_heads");
  positive(c.head_dim, "head_dim");
  positive(c.pairwise_width, "pairwise_width");
  positive(c.num_pseudo_tokens, "num_pseudo_tokens");
  positive(c.conv_channels, "conv_channels");
  positive(c.max_grid_points, "max_grid_points");
  positive(c.covariance_layers, "covariance_layers");
  positive(c.projection_layers, "projection_layers");
  positive(c.bias_features, "bias_features");
  positive(c.projection_dim, "projection_dim");
  positive(c.num_permutations, "num_permutations");
  positive(c.kernel_size, "kernel_size");
  if (c.cnn_layers < 0) throw ConfigError("model configuration: cnn_layers must be >= 0");
  if (c.pseudo_locations != "attention" && c.pseudo_locations != "context_mean") {
    throw ConfigError(
        "model configuration: pseudo_locations must be 'attention' or "
        "'context_mean', not '" +
        c.pseudo_locations + "'");
  }
  // A hostile or mistyped configuration (a checkpoint's metadata, a form) must be refused before
  // it allocates: every size has a generous ceiling, and the model a parameter budget.
  auto at_most = [&](int64_t v, int64_t limit, const char* name) {
    if (v > limit) {
      throw ResourceLimitError(std::string("model configuration: ") + name + " = " +
                               std::to_string(v) + " is above the limit of " +
                               std::to_string(limit));
    }
  };
  at_most(c.dim_x, 64, "dim_x");
  at_most(c.dim_y, 64, "dim_y");
  at_most(c.dim_model, 8192, "dim_model");
  at_most(c.num_layers, 256, "num_layers");
  at_most(c.num_heads, 1024, "num_heads");
  at_most(c.head_dim, 4096, "head_dim");
  at_most(c.pairwise_width, 8192, "pairwise_width");
  at_most(c.num_pseudo_tokens, 65536, "num_pseudo_tokens");
  at_most(c.conv_channels, 8192, "conv_channels");
  at_most(c.kernel_size, 255, "kernel_size");
  at_most(c.cnn_layers, 256, "cnn_layers");
  at_most(c.covariance_layers, 256, "covariance_layers");
  at_most(c.projection_layers, 256, "projection_layers");
  at_most(c.projection_dim, 4096, "projection_dim");
  at_most(c.num_permutations, 100000, "num_permutations");
  at_most(c.bias_features, 64, "bias_features");
  at_most(c.time_bias_features, 64, "time_bias_features");
  if (c.time_bias_features > 0 && c.dim_coordinates() < 2)
    throw ConfigError(
        "model configuration: time_bias_features needs a time coordinate besides "
        "space (at least two coordinates)");
  // An upper estimate over all kinds (attention, pairwise MLPs, feed-forward, convolutions).
  const double d = double(c.dim_model), inner = double(c.num_heads) * double(c.head_dim),
               w = double(c.pairwise_width), k = double(c.kernel_size),
               ch = double(c.conv_channels);
  const double per_layer =
      2.0 * (4.0 * d * inner + 4.0 * d * d + w * w + w * double(c.num_heads + c.dim_x + 2));
  const double parameters =
      double(c.num_layers + c.covariance_layers + c.projection_layers) * per_layer +
      ch * ch * k * k * double(2 * c.unet_depth + c.cnn_layers + 2) +
      double(c.num_pseudo_tokens) * d + d * double(c.projection_dim + c.dim_x + c.dim_y);
  constexpr double kMaxParameters = 2e9;
  if (parameters > kMaxParameters) {
    throw ResourceLimitError("model configuration: the model would have about " +
                             std::to_string(int64_t(parameters / 1e6)) +
                             " million parameters, above the limit of 2000 million");
  }
  if (c.covariance != "cholesky" && c.covariance != "lowrank")
    throw ConfigError("model configuration: covariance must be 'cholesky' or 'lowrank', not '" +
                      c.covariance + "'");
  if (c.unet_depth < 0 || c.unet_depth > 12)
    throw ConfigError("model configuration: unet_depth must be in 0..12");
  if (!(c.min_stddev >= 0.0)) throw ConfigError("model configuration: min_stddev must be >= 0");
  if (!(c.input_scale > 0.0) || !std::isfinite(c.input_scale))
    throw ConfigError("model configuration: input_scale must be a positive number");
  if (c.dim_features < 0 || c.dim_features >= c.dim_x)
    throw ConfigError(
        "model configuration: dim_features must be in 0..dim_x - 1 (at least one "
        "input is a coordinate)");
  const auto& info = model_info(c.kind);
  if (c.dim_features > 0 && !info.place_features)
    throw ConfigError("model configuration: " + info.display_name +
                      " does not take place features (dim_features must be 0)");
  if (info.on_grid && c.dim_coordinates() < 2)
    throw ConfigError("model configuration: the on-grid " + info.display_name +
                      " needs at least two coordinates");
  if (info.on_grid && c.input_scale != 1.0)
    throw ConfigError("model configuration: the on-grid " + info.display_name +
                      " needs input_scale = 1");
}

}  // namespace

const std::vector<ModelInfo>& model_infos() {
  static const std::vector<ModelInfo> infos = [] {
    std::vector<ModelInfo> list;
    for (const auto& spec : model_specs()) list.push_back(spec.info);
    return list;
  }();
  return infos;
}

namespace {
const ModelSpec* find_model_spec(const std::string& kind) {
  for (const auto& spec : model_specs()) {
    if (spec.info.kind == kind) return &spec;
  }
  return nullptr;
}
}  // namespace

const ModelSpec& model_spec(const std::string& kind) {
  if (const auto* spec = find_model_spec(kind)) return *spec;
  throw ConfigError("unknown model '" + kind + "' (known: " + known_kinds() + ")");
}

const ModelInfo& model_info(const std::string& kind) {
  for (const auto& info : model_infos()) {
    if (info.kind == kind) return info;
  }
  throw ConfigError("unknown model '" + kind + "' (known: " + known_kinds() + ")");
}

std::shared_ptr<NeuralProcessImpl> make_model(const ModelConfig& config) {
  const auto& spec = model_spec(config.kind);
  check_sizes(config);
  return spec.make(config);
}

nlohmann::json model_options_json(const ModelConfig& config) {
  const auto all = config.to_json();
  // A kind this version does not know (an empty record, a newer file): every field, unchanged.
  const auto* spec = find_model_spec(config.kind);
  if (!spec) return all;
  nlohmann::json own;
  for (const auto& name : common_options()) own[name] = all.at(name);
  for (const auto& name : spec->options) own[name] = all.at(name);
  return own;
}

void set_model_option(nlohmann::json& json, const std::string& key, const nlohmann::json& value) {
  if (!json.contains(key)) {
    const auto kind = json.value("kind", std::string());
    std::string settings;
    for (const auto& [name, v] : json.items()) {
      if (name != "kind") settings += (settings.empty() ? "" : ", ") + name;
    }
    throw ConfigError("the " + model_info(kind).display_name + " model has no setting '" + key +
                      "' (its settings: " + settings + ")");
  }
  json[key] = value;
}

void declare_time_coordinate(ModelConfig& config) {
  const auto& spec = model_spec(config.kind);
  if (spec.time_coordinate) spec.time_coordinate(config);
}

}  // namespace npe
