#pragma once
// Minimal command-line option parsing for npe's subcommands.

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npe::cli {

/// A mistake in how npe was called; main prints it with the usage and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Consumes "--name value", "--name=value" and bare "--flag" options. Each take removes what it
/// found; finish() rejects anything left over, so typos never pass silently.
class Arguments {
 public:
  explicit Arguments(std::vector<std::string> args) : m_args(std::move(args)) {}

  std::optional<std::string> take(const std::string& name);
  std::string take_or(const std::string& name, const std::string& fallback);
  bool take_flag(const std::string& name);
  /// Every value of a repeatable option, in order.
  std::vector<std::string> take_all(const std::string& name);
  int64_t take_int(const std::string& name, int64_t fallback);
  double take_double(const std::string& name, double fallback);
  /// Throws UsageError naming the first unrecognised argument.
  void finish() const;

 private:
  std::vector<std::string> m_args;
};

/// Parses a whole string as a number or throws UsageError naming the option.
int64_t parse_int(const std::string& text, const std::string& option);
double parse_double(const std::string& text, const std::string& option);
/// "D" (every input dimension) or "D1,D2,..." (one per input dimension).
std::vector<double> parse_translation(const std::string& text, const std::string& option);
/// KEY=VALUE pairs as a JSON object; VALUE is parsed as JSON when it can be (numbers,
/// booleans), else taken as a string.
nlohmann::json parse_key_values(const std::vector<std::string>& pairs, const std::string& option);

}  // namespace npe::cli
