#pragma once
// Checkpoints: model weights plus JSON metadata in one file, written atomically.

#include <filesystem>
#include <limits>
#include <memory>
#include <string>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "npe/models/model.h"

namespace npe {

/// What a checkpoint records besides the weights.
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
  double wall_time_s = 0.0;
  std::string device;
  double validation_ll = std::numeric_limits<double>::quiet_NaN();
  uint64_t seed = 0;
  std::string size;
  std::string command;
  std::string created_at;
  std::string libtorch_version;

  /// Registry name of the task the model was trained on ("gp1d", "tfmnist-central"); empty
  /// when the checkpoint does not say.
  std::string task_name() const;

  nlohmann::json to_json() const;
  /// Throws CheckpointError when fields are missing or malformed.
  static CheckpointMetadata from_json(const nlohmann::json& json);
};

/// Writes weights and metadata to `path` atomically (temporary file in the same folder, then
/// rename), so an interrupted save never destroys an existing checkpoint.
/// Throws CheckpointError when the file cannot be written.
void save_checkpoint(const std::filesystem::path& path, NeuralProcessImpl& model,
                     const CheckpointMetadata& metadata);

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

/// Writes text to `path` atomically. Throws Error on failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

}  // namespace npe
