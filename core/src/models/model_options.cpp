#include "npe/models/model_options.h"

#include <cmath>

#include "npe/errors.h"
#include "npe/json_fields.h"

namespace npe {
namespace {

const char* const kOptionsWhat = "model configuration";

class ToJson final : public OptionVisitor {
 public:
  nlohmann::json json = nlohmann::json::object();
  void field(const char* name, int64_t& value, int64_t, int64_t, const char*) override {
    json[name] = value;
  }
  void field(const char* name, double& value, double, double, const char*) override {
    json[name] = value;
  }
  void field(const char* name, bool& value, const char*) override { json[name] = value; }
  void field(const char* name, std::string& value, const std::vector<std::string>&,
             const char*) override {
    json[name] = value;
  }
};

class FromJson final : public OptionVisitor {
 public:
  explicit FromJson(const nlohmann::json& json) : m_json(json) {}
  void field(const char* name, int64_t& value, int64_t, int64_t, const char*) override {
    read_json_field(m_json, name, value, kOptionsWhat);
  }
  void field(const char* name, double& value, double, double, const char*) override {
    read_json_field(m_json, name, value, kOptionsWhat);
  }
  void field(const char* name, bool& value, const char*) override {
    read_json_field(m_json, name, value, kOptionsWhat);
  }
  void field(const char* name, std::string& value, const std::vector<std::string>&,
             const char*) override {
    read_json_field(m_json, name, value, kOptionsWhat);
  }

 private:
  const nlohmann::json& m_json;
};

class RangeCheck final : public OptionVisitor {
 public:
  void field(const char* name, int64_t& value, int64_t min, int64_t max, const char*) override {
    if (value < min) {
      throw ConfigError(std::string(kOptionsWhat) + ": " + name +
                        " must be >= " + std::to_string(min));
    }
    if (value > max) {
      throw ResourceLimitError(std::string(kOptionsWhat) + ": " + name + " = " +
                               std::to_string(value) + " is above the limit of " +
                               std::to_string(max));
    }
  }
  void field(const char* name, double& value, double min, double max, const char*) override {
    if (!(value >= min) || !std::isfinite(value)) {  // NaN fails here too
      throw ConfigError(std::string(kOptionsWhat) + ": " + name +
                        " must be a number >= " + nlohmann::json(min).dump());
    }
    if (value > max) {
      throw ResourceLimitError(std::string(kOptionsWhat) + ": " + name + " = " +
                               nlohmann::json(value).dump() + " is above the limit of " +
                               nlohmann::json(max).dump());
    }
  }
  void field(const char*, bool&, const char*) override {}
  void field(const char* name, std::string& value, const std::vector<std::string>& choices,
             const char*) override {
    for (const auto& choice : choices) {
      if (value == choice) return;
    }
    std::string list;
    for (const auto& choice : choices) list += (list.empty() ? "'" : " or '") + choice + "'";
    throw ConfigError(std::string(kOptionsWhat) + ": " + name + " must be " + list + ", not '" +
                      value + "'");
  }
};

class Describe final : public OptionVisitor {
 public:
  std::vector<OptionDescription> fields;
  void field(const char* name, int64_t& value, int64_t min, int64_t max,
             const char* help) override {
    fields.push_back({name, "integer", help, value, min, max, {}});
  }
  void field(const char* name, double& value, double min, double max, const char* help) override {
    fields.push_back({name, "number", help, value, min, max, {}});
  }
  void field(const char* name, bool& value, const char* help) override {
    fields.push_back({name, "boolean", help, value, nullptr, nullptr, {}});
  }
  void field(const char* name, std::string& value, const std::vector<std::string>& choices,
             const char* help) override {
    fields.push_back({name, "choice", help, value, nullptr, nullptr, choices});
  }
};

// The visitors that only read take the options by const reference; visiting is one interface
// for reading and writing, so they visit a copy.
template <typename Visitor>
Visitor visit_copy(const ModelOptions& options, Visitor visitor) {
  options.clone()->visit(visitor);
  return visitor;
}

}  // namespace

nlohmann::json options_to_json(const ModelOptions& options) {
  return visit_copy(options, ToJson{}).json;
}

void options_from_json(ModelOptions& options, const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError(std::string(kOptionsWhat) + " must be a JSON object");
  FromJson reader(json);
  options.visit(reader);
}

void check_option_ranges(const ModelOptions& options) {
  visit_copy(options, RangeCheck{});
}

std::vector<OptionDescription> describe_options(const ModelOptions& options) {
  return visit_copy(options, Describe{}).fields;
}

}  // namespace npe
