#pragma once
// Checkpoints: model weights plus JSON metadata in one file, written atomically.

#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "npe/models/model.h"

namespace npe {

/// What a checkpoint records besides the weights.
/// One run of `npe train` (or the training tab) on a job: the first, then every resumption.
struct TrainingSession {
  std::string command;
  std::string device;
  std::string started_at;  ///< UTC, ISO 8601
  int64_t from_step = 0;
  int64_t to_step = 0;
  double wall_time_s = 0.0;
  /// The pairwise precision the session trained in ("fp32", "bf16"; precision_name()), empty
  /// in sessions recorded before it was: a resumption continues in it unless told otherwise.
  std::string precision;

  nlohmann::json to_json() const;
  /// Throws CheckpointError when a field is missing or has the wrong type.
  static TrainingSession from_json(const nlohmann::json& json);
};

struct CheckpointMetadata {
  /// 2: the transformer NPs as corrected to the paper (eq. 10 on attention weights, two-layer
  /// token embedders, no unused last-layer updates). Version-1 files of those kinds are refused
  /// with an explanation (ModelInfo::definition_version); other kinds did not change.
  static constexpr int kFormatVersion = 2;
  int format_version = kFormatVersion;
  ModelConfig model;
  /// Task-source configuration the model was trained on (TaskSource::to_json()).
  nlohmann::json task;
  int64_t steps = 0;
  /// Steps the training run that wrote the file plans in all (0: not recorded). More than
  /// `steps` in a checkpoint written while training goes on (npe train --checkpoint-every).
  int64_t planned_steps = 0;
  /// The model of the best validation of its run (npe train --keep-best), not a checkpoint of a
  /// run still going: `steps` is where it was kept, `planned_steps` the run's plan.
  bool best_of_run = false;
  double wall_time_s = 0.0;
  std::string device;
  double validation_ll = std::numeric_limits<double>::quiet_NaN();
  uint64_t seed = 0;
  std::string size;
  std::string command;
  std::string created_at;
  std::string libtorch_version;
  /// Every run that trained these weights, in order (empty in checkpoints written before
  /// sessions were recorded: `command` alone then says how the run started).
  std::vector<TrainingSession> sessions;

  /// Registry name of the task the model was trained on ("gp1d", "tfmnist-central"); empty
  /// when the checkpoint does not say.
  std::string task_name() const;

  /// The precision the run last trained in: the latest session's recorded one, or, for sessions
  /// from before it was recorded, the latest `--precision` their commands name (or the
  /// first command's); empty when none says. A resumed run keeps it so that `auto` (which
  /// picks bf16 on some CPUs) does not switch a float32 run to bfloat16 halfway.
  std::string training_precision() const;

  nlohmann::json to_json() const;
  /// Throws CheckpointError when fields are missing or malformed.
  static CheckpointMetadata from_json(const nlohmann::json& json);
};

/// Adds records of its own (training state, optimiser) to a checkpoint being written.
using ArchiveWriter = std::function<void(torch::serialize::OutputArchive&)>;

/// Writes weights and metadata (and what `extra` adds) to `path` atomically: a temporary file in
/// the same folder, flushed to disk (fsync), then renamed over `path` and the folder synced. An
/// interrupted save or a killed process never leaves `path` corrupt: it holds the previous
/// checkpoint until the new one is complete. Throws CheckpointError when it cannot be written.
void save_checkpoint(const std::filesystem::path& path, NeuralProcessImpl& model,
                     const CheckpointMetadata& metadata, const ArchiveWriter& extra = {});

/// Opens a checkpoint's archive to read records besides the weights. Throws CheckpointError
/// naming the file when it is missing or cannot be read as an archive.
/// Tensors are loaded onto `map_to` when given, else onto the CPU (whatever device wrote them).
torch::serialize::InputArchive open_checkpoint_archive(
    const std::filesystem::path& path, std::optional<torch::Device> map_to = std::nullopt);

/// A loaded model (in eval mode, on `device`) and its metadata.
struct LoadedCheckpoint {
  std::shared_ptr<NeuralProcessImpl> model;
  CheckpointMetadata metadata;
};

/// Loads and verifies a checkpoint: the file must exist, parse, carry metadata of a supported
/// format version, match the model's parameter names and shapes, and pass its checksum.
/// Throws CheckpointError with a message that names the file and the problem.
LoadedCheckpoint load_checkpoint(const std::filesystem::path& path,
                                 torch::Device device = torch::kCPU);

/// Reads only the metadata. Throws CheckpointError.
CheckpointMetadata read_checkpoint_metadata(const std::filesystem::path& path);

}  // namespace npe
