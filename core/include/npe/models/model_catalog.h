#pragma once
// Finding the pretrained models shipped in models/ (source tree or installed).

#include <filesystem>
#include <string>
#include <vector>

#include "npe/models/checkpoint.h"

namespace npe {

/// Folders searched for shipped models, in order: $NPE_MODELS_DIR (if set),
/// ../share/np-explorer/models relative to the running executable (installed or unpacked
/// packages), the source tree's models/ (when run from a build tree), and the configured install
/// prefix's share/np-explorer/models. Only existing folders.
std::vector<std::filesystem::path> model_search_dirs();

struct ShippedModel {
  std::filesystem::path path;
  CheckpointMetadata metadata;
};

/// The checkpoints (*.pt) directly in `folder`, in the registry's display order and, within a
/// kind, the smallest size (model_sizes()) first. Unreadable files are skipped and described in
/// `problems`.
std::vector<ShippedModel> find_models_in(const std::filesystem::path& folder,
                                         std::vector<std::string>* problems = nullptr);

/// The checkpoints (*.pt) in <dir>/<task>/ of the first search folder that has any, in the
/// registry's display order. Unreadable files are skipped and described in `problems`.
std::vector<ShippedModel> find_shipped_models(const std::string& task,
                                              std::vector<std::string>* problems = nullptr);

}  // namespace npe
