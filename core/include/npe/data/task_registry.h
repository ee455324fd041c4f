#pragma once
// Name -> task source registry: every task the tools can train and evaluate on.

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/data/task_source.h"

namespace npe {

struct TaskInfo {
  std::string name;         ///< as on the command line ("gp1d", "tfmnist")
  std::string description;  ///< one sentence
  /// Folder of the shipped models for this task under models/ (tasks may share one).
  std::string models_folder;
};

/// All registered tasks in display order.
const std::vector<TaskInfo>& task_infos();
/// Throws ConfigError listing the known names.
const TaskInfo& task_info(const std::string& name);

/// Builds the named task; `overrides` replaces fields of its configuration (as in to_json()).
/// Throws ConfigError for unknown names or invalid fields.
std::unique_ptr<TaskSource> make_task_source(const std::string& name,
                                             const nlohmann::json& overrides = {});
/// Rebuilds a task source from its JSON (TaskSource::to_json(), as stored in checkpoints).
/// Throws ConfigError.
std::unique_ptr<TaskSource> task_source_from_json(const nlohmann::json& json);

}  // namespace npe
