#pragma once
// Checking and parsing option values CLI11 receives as text: bounds, number lists and
// translations, name lists, KEY=VALUE pairs.

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace npe::cli {

/// A validator for numbers >= minimum, with a message that says so ("--tasks: must be a number
/// >= 1, got 'many'").
CLI::Validator at_least(double minimum);

/// Comma-separated numbers ("0,0.5,1"; also translations: "D" for every input dimension or
/// "D1,D2,..." one per dimension). Throws UsageError naming the option.
std::vector<double> parse_numbers(const std::string& text, const std::string& option);
/// Comma-separated names; empty items are dropped.
std::vector<std::string> parse_list(const std::string& text);
/// KEY=VALUE pairs as a JSON object; VALUE is parsed as JSON when it can be (numbers,
/// booleans), else taken as a string. Throws UsageError naming the option.
nlohmann::json parse_key_values(const std::vector<std::string>& pairs, const std::string& option);
/// The registered task names ("gp1d, tfmnist, ...") and model kinds, for help texts.
std::string task_names_text();
std::string model_kinds_text();
/// --data PATH: the data file of tasks that read one (era5), as the task option data=PATH.
CLI::Option* add_data_option(CLI::App* command, std::vector<std::string>& task_options);

}  // namespace npe::cli
