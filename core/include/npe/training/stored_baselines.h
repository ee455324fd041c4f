#pragma once
// Exact GP baselines (gp-bayes, gp-oracle) measured by an earlier accuracy table (the rows of
// `npe bench accuracy --json`, accuracy_table.h), reused instead of evaluated again: gp-bayes costs
// about half a second per task on one core, so a 4,096-task ceiling is worth measuring once and
// pairing with every new checkpoint. A stored row is used only where everything that decides its
// tasks and its numbers matches.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "npe/training/evaluation.h"

namespace npe {

/// What decides an exact baseline's evaluation: the same key means the same tasks and numbers.
struct BaselineRun {
  std::string model;            // "gp-bayes"
  std::string task;             // the task source's name
  nlohmann::json task_options;  // the --task-option object
  uint64_t seed = 0;
  int64_t tasks = 0, batch_size = 0;
  nlohmann::json settings = nlohmann::json::object();  // the predictor's own options

  /// The members an accuracy table writes into each row of such a baseline.
  nlohmann::json to_json() const;
};

class StoredBaselines {
 public:
  /// Reads the rows of an accuracy table's JSON. Throws DataError naming the file when it cannot
  /// be read or is not such an output.
  explicit StoredBaselines(const std::filesystem::path& file);

  /// The stored result of `run`, or nothing where the file has no row of that model. Throws
  /// DataError, saying what differs, where it has one measured on other tasks or settings.
  std::optional<EvalResult> find(const BaselineRun& run) const;

  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  nlohmann::json rows_;
};

}  // namespace npe
