#include "arguments.h"

#include <cmath>
#include <cstdlib>

namespace npe::cli {

std::optional<std::string> Arguments::take(const std::string& name) {
  for (size_t i = 0; i < m_args.size(); ++i) {
    const auto& arg = m_args[i];
    if (arg == name) {
      if (i + 1 >= m_args.size()) throw UsageError("option " + name + " needs a value");
      auto value = m_args[i + 1];
      m_args.erase(m_args.begin() + i, m_args.begin() + i + 2);
      return value;
    }
    if (arg.rfind(name + "=", 0) == 0) {
      auto value = arg.substr(name.size() + 1);
      m_args.erase(m_args.begin() + i);
      return value;
    }
  }
  return std::nullopt;
}

std::string Arguments::take_or(const std::string& name, const std::string& fallback) {
  auto value = take(name);
  return value ? *value : fallback;
}

bool Arguments::take_flag(const std::string& name) {
  for (size_t i = 0; i < m_args.size(); ++i) {
    if (m_args[i] == name) {
      m_args.erase(m_args.begin() + i);
      return true;
    }
  }
  return false;
}

std::vector<std::string> Arguments::take_all(const std::string& name) {
  std::vector<std::string> values;
  while (auto value = take(name)) values.push_back(*value);
  return values;
}

int64_t Arguments::take_int(const std::string& name, int64_t fallback) {
  auto value = take(name);
  return value ? parse_int(*value, name) : fallback;
}

double Arguments::take_double(const std::string& name, double fallback) {
  auto value = take(name);
  return value ? parse_double(*value, name) : fallback;
}

void Arguments::finish() const {
  if (!m_args.empty()) throw UsageError("unrecognised argument '" + m_args.front() + "'");
}

int64_t parse_int(const std::string& text, const std::string& option) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    throw UsageError(option + " expects an integer, got '" + text + "'");
  }
  return value;
}

double parse_double(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value)) {
    throw UsageError(option + " expects a finite number, got '" + text + "'");
  }
  return value;
}

std::vector<double> parse_translation(const std::string& text, const std::string& option) {
  std::vector<double> values;
  size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    values.push_back(parse_double(item, option));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

nlohmann::json parse_key_values(const std::vector<std::string>& pairs, const std::string& option) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& pair : pairs) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(option + " expects KEY=VALUE, got '" + pair + "'");
    }
    const auto key = pair.substr(0, eq), text = pair.substr(eq + 1);
    auto value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    out[key] = value.is_discarded() ? nlohmann::json(text) : value;
  }
  return out;
}

}  // namespace npe::cli
