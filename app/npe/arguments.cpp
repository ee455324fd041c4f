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

}  // namespace npe::cli
