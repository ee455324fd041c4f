#pragma once
// Command-line options made from a group of typed settings (npe/option_fields.h): each field
// becomes an option bound to it, with its range or choices, its help and its default, so a
// command's limits are core's and are written once.

#include <functional>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "npe/option_fields.h"

namespace npe::cli {

/// Adds one option per field of `visit` to `command`, named by `flag` (e.g. "batch_size" ->
/// "--batch-size") and bound to the field, which must outlive the parse. Returns the options by
/// field name.
std::map<std::string, CLI::Option*> add_field_options(
    CLI::App& command, const FieldVisit& visit,
    const std::function<std::string(const std::string& field)>& flag);

/// "--" and the field's name with dashes for underscores ("batch_size" -> "--batch-size").
std::string dashed_flag(const std::string& field);

}  // namespace npe::cli
