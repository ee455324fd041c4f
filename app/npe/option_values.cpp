#include "option_values.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "commands.h"
#include "npe/data/task_registry.h"
#include "npe/models/model_registry.h"

namespace npe::cli {

CLI::Validator at_least(double minimum) {
  std::ostringstream bound;
  bound << minimum;
  return CLI::Validator(
      [minimum, text = bound.str()](std::string& input) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(input.c_str(), &end);
        if (input.empty() || *end != '\0' || !std::isfinite(value) || value < minimum) {
          return "must be a number >= " + text + ", got '" + input + "'";
        }
        return {};
      },
      ">=" + bound.str());
}

std::vector<double> parse_numbers(const std::string& text, const std::string& option) {
  std::vector<double> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(value)) {
      throw UsageError(option + " expects finite numbers separated by commas, got '" + text + "'");
    }
    values.push_back(value);
  }
  if (values.empty()) throw UsageError(option + " needs at least one value");
  return values;
}

std::vector<std::string> parse_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
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

CLI::Option* add_data_option(CLI::App* command, std::vector<std::string>& task_options) {
  return command->add_option_function<std::string>(
      "--data",
      [&task_options](const std::string& path) {
        // As a JSON string, so that a path with quotes or backslashes stays itself.
        task_options.push_back("data=" + nlohmann::json(path).dump());
      },
      "Data of the task (era5, gridded: a NetCDF or GRIB file; series: a CSV, TSV or whitespace "
      "file "
      "with a header; pictures: a folder of PNG or JPEG files, an IDX file or CIFAR-10's "
      "binary batches)");
}

std::string task_names_text() {
  std::string text;
  for (const auto& info : task_infos()) text += (text.empty() ? "" : ", ") + info.name;
  return text;
}

std::string model_kinds_text() {
  std::string text;
  for (const auto& info : model_infos()) text += (text.empty() ? "" : ", ") + info.kind;
  return text;
}

}  // namespace npe::cli
