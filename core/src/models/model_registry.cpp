#include "npe/models/model_registry.h"

#include <cmath>
#include <typeinfo>

#include "models/kinds/model_kinds.h"
#include "npe/errors.h"

namespace npe {

// The kinds' specifications, defined in their folders (models/kinds/<kind>/).
#define NPE_DECLARE_SPEC(kind) ModelSpec kind##_spec();
NPE_MODEL_KINDS(NPE_DECLARE_SPEC)
#undef NPE_DECLARE_SPEC

namespace {

// The kinds of model_kinds.h, in its order.
const std::vector<ModelSpec>& model_specs() {
#define NPE_SPEC(kind) kind##_spec(),
  static const std::vector<ModelSpec> specs = {NPE_MODEL_KINDS(NPE_SPEC)};
#undef NPE_SPEC
  return specs;
}

std::string known_kinds() {
  std::string list;
  for (const auto& info : model_infos()) list += (list.empty() ? "" : ", ") + info.kind;
  return list;
}

// The checks across fields: each field's own range is checked by check_option_ranges.
void check_sizes(const ModelConfig& c) {
  const auto& info = model_info(c.kind);
  const auto* options = c.all_options();
  const auto expected = model_spec(c.kind).make_options();
  if (!options || typeid(*options) != typeid(*expected)) {
    throw ConfigError("model configuration: the options are not those of the " + info.display_name +
                      " model (build it with ModelConfig(\"" + c.kind + "\"))");
  }
  auto positive = [&](int64_t v, const char* name) {
    if (v < 1) throw ConfigError(std::string("model configuration: ") + name + " must be >= 1");
  };
  auto at_most = [&](int64_t v, int64_t limit, const char* name) {
    if (v > limit) {
      throw ResourceLimitError(std::string("model configuration: ") + name + " = " +
                               std::to_string(v) + " is above the limit of " +
                               std::to_string(limit));
    }
  };
  positive(c.dim_x, "dim_x");
  positive(c.dim_y, "dim_y");
  at_most(c.dim_x, 64, "dim_x");
  at_most(c.dim_y, 64, "dim_y");
  // Before anything reads the coordinates (dim_x - dim_features).
  if (c.dim_features < 0 || c.dim_features >= c.dim_x)
    throw ConfigError(
        "model configuration: dim_features must be in 0..dim_x - 1 (at least one "
        "input is a coordinate)");
  check_option_ranges(*options);
  if (const auto* bias = c.find_options<AttentionBiasOptions>()) {
    if (bias->time_bias_features > 0 && c.dim_coordinates() < 2)
      throw ConfigError(
          "model configuration: time_bias_features needs a time coordinate besides "
          "space (at least two coordinates)");
  }
  if (!(c.min_stddev >= 0.0)) throw ConfigError("model configuration: min_stddev must be >= 0");
  if (!(c.input_scale > 0.0) || !std::isfinite(c.input_scale))
    throw ConfigError("model configuration: input_scale must be a positive number");
  if (c.dim_features > 0 && !info.place_features)
    throw ConfigError("model configuration: " + info.display_name +
                      " does not take place features (dim_features must be 0)");
  if (info.on_grid && c.dim_coordinates() < 2)
    throw ConfigError("model configuration: the on-grid " + info.display_name +
                      " needs at least two coordinates");
  if (info.on_grid && c.input_scale != 1.0)
    throw ConfigError("model configuration: the on-grid " + info.display_name +
                      " needs input_scale = 1");
  // Refused before anything is allocated, by the kind's own count (last: its terms add the
  // fields checked above).
  const double parameters = model_spec(c.kind).parameter_count(c);
  constexpr double kMaxParameters = 2e9;
  if (parameters > kMaxParameters) {
    throw ResourceLimitError("model configuration: the model would have about " +
                             std::to_string(int64_t(parameters / 1e6)) +
                             " million parameters, above the limit of 2000 million");
  }
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
