#include "npe/training/stored_baselines.h"

#include <fstream>

#include "npe/errors.h"

namespace npe {

nlohmann::json BaselineRun::to_json() const {
  return {{"task_options", task_options}, {"seed", seed}, {"settings", settings}};
}

StoredBaselines::StoredBaselines(const std::filesystem::path& file) : file_(file) {
  std::ifstream in(file);
  if (!in) throw DataError("cannot read " + file.string());
  rows_ = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!rows_.is_array()) {
    throw DataError(file.string() + " is not the JSON output of npe bench accuracy --json");
  }
}

std::optional<EvalResult> StoredBaselines::find(const BaselineRun& run) const {
  const nlohmann::json wanted = {
      {"task", run.task},   {"task_options", run.task_options}, {"seed", run.seed},
      {"tasks", run.tasks}, {"batch_size", run.batch_size},     {"settings", run.settings}};
  std::string mismatch;
  for (const auto& row : rows_) {
    if (!row.is_object() || row.value("model", "") != run.model) continue;
    std::string differs;
    for (const auto& [key, value] : wanted.items()) {
      if (!row.contains(key) || row.at(key) != value) {
        differs += (differs.empty() ? "" : ", ") + key + " " +
                   (row.contains(key) ? row.at(key).dump() : "missing") + " (here " + value.dump() +
                   ")";
      }
    }
    if (!differs.empty()) {
      mismatch = differs;
      continue;
    }
    try {
      return eval_result_from_json(row);
    } catch (const InvalidInputError& e) {
      throw DataError(file_.string() + ", " + run.model + ": " + e.what());
    }
  }
  if (!mismatch.empty()) {
    throw DataError(file_.string() + " measured " + run.model + " differently: " + mismatch);
  }
  return std::nullopt;
}

}  // namespace npe
