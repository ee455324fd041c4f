#include "npe/option_fields.h"

#include <cmath>
#include <utility>

#include "npe/errors.h"
#include "npe/json_fields.h"

namespace npe {
namespace {

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
  FromJson(const nlohmann::json& json, std::string what) : m_json(json), m_what(std::move(what)) {}
  void field(const char* name, int64_t& value, int64_t, int64_t, const char*) override {
    read_json_field(m_json, name, value, m_what.c_str());
  }
  void field(const char* name, double& value, double, double, const char*) override {
    read_json_field(m_json, name, value, m_what.c_str());
  }
  void field(const char* name, bool& value, const char*) override {
    read_json_field(m_json, name, value, m_what.c_str());
  }
  void field(const char* name, std::string& value, const std::vector<std::string>&,
             const char*) override {
    read_json_field(m_json, name, value, m_what.c_str());
  }

 private:
  const nlohmann::json& m_json;
  std::string m_what;
};

class RangeCheck final : public OptionVisitor {
 public:
  explicit RangeCheck(std::string what) : m_what(std::move(what)) {}
  void field(const char* name, int64_t& value, int64_t min, int64_t max, const char*) override {
    if (value < min) {
      throw ConfigError(m_what + ": " + name + " must be >= " + std::to_string(min));
    }
    if (value > max) {
      throw ResourceLimitError(m_what + ": " + name + " = " + std::to_string(value) +
                               " is above the limit of " + std::to_string(max));
    }
  }
  void field(const char* name, double& value, double min, double max, const char*) override {
    if (!(value >= min) || !std::isfinite(value)) {  // NaN fails here too
      throw ConfigError(m_what + ": " + name +
                        " must be a number >= " + nlohmann::json(min).dump());
    }
    if (value > max) {
      throw ResourceLimitError(m_what + ": " + name + " = " + nlohmann::json(value).dump() +
                               " is above the limit of " + nlohmann::json(max).dump());
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
    throw ConfigError(m_what + ": " + name + " must be " + list + ", not '" + value + "'");
  }

 private:
  std::string m_what;
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

}  // namespace

nlohmann::json fields_to_json(const FieldVisit& visit) {
  ToJson writer;
  visit(writer);
  return writer.json;
}

void fields_from_json(const FieldVisit& visit, const nlohmann::json& json,
                      const std::string& what) {
  if (!json.is_object()) throw ConfigError(what + " must be a JSON object");
  FromJson reader(json, what);
  visit(reader);
}

void check_field_ranges(const FieldVisit& visit, const std::string& what) {
  RangeCheck check(what);
  visit(check);
}

std::vector<OptionDescription> describe_fields(const FieldVisit& visit) {
  Describe describe;
  visit(describe);
  return describe.fields;
}

}  // namespace npe
