#include "field_options.h"

#include <algorithm>

namespace npe::cli {
namespace {

class CliOptions final : public OptionVisitor {
 public:
  CliOptions(CLI::App& command, const std::function<std::string(const std::string&)>& flag)
      : m_command(command), m_flag(flag) {}

  std::map<std::string, CLI::Option*> options;

  void field(const char* name, int64_t& value, int64_t min, int64_t max,
             const char* help) override {
    options[name] = m_command.add_option(m_flag(name), value, help)
                        ->check(CLI::Range(min, max))
                        ->capture_default_str();
  }
  void field(const char* name, double& value, double min, double max, const char* help) override {
    options[name] = m_command.add_option(m_flag(name), value, help)
                        ->check(CLI::Range(min, max))
                        ->capture_default_str();
  }
  void field(const char* name, bool& value, const char* help) override {
    options[name] = m_command.add_flag(m_flag(name), value, help);
  }
  void field(const char* name, std::string& value, const std::vector<std::string>& choices,
             const char* help) override {
    options[name] = m_command.add_option(m_flag(name), value, help)
                        ->check(CLI::IsMember(choices))
                        ->capture_default_str();
  }

 private:
  CLI::App& m_command;
  const std::function<std::string(const std::string&)>& m_flag;
};

}  // namespace

std::map<std::string, CLI::Option*> add_field_options(
    CLI::App& command, const FieldVisit& visit,
    const std::function<std::string(const std::string& field)>& flag) {
  CliOptions adder(command, flag);
  visit(adder);
  return adder.options;
}

std::string dashed_flag(const std::string& field) {
  auto flag = "--" + field;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

}  // namespace npe::cli
