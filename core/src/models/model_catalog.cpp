#include "npe/models/model_catalog.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "npe/errors.h"
#include "npe/models/model_config.h"
#include "npe/models/model_registry.h"
#include "npe/shipped_files.h"

namespace npe {
namespace fs = std::filesystem;

std::vector<fs::path> model_search_dirs() {
  return shipped_file_dirs("models", "NPE_MODELS_DIR");
}

std::vector<ShippedModel> find_models_in(const fs::path& folder,
                                         std::vector<std::string>* problems) {
  std::error_code ec;
  std::vector<ShippedModel> found;
  if (!fs::is_directory(folder, ec)) return found;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.path().extension() == ".pt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    try {
      found.push_back({file, read_checkpoint_metadata(file)});
    } catch (const Error& e) {
      if (problems) problems->push_back(e.what());
    }
  }
  // Registry order, and within a kind the smallest size first: "TE-TNP" before "TE-TNP · paper
  // size", so a larger size shipped later leaves the small models' colours where they were. A
  // custom size (none of the named ones) comes after the named ones.
  auto kind_rank = [](const ShippedModel& m) {
    const auto& infos = model_infos();
    for (size_t i = 0; i < infos.size(); ++i) {
      if (infos[i].kind == m.metadata.model.kind) return i;
    }
    return infos.size();
  };
  auto size_rank = [](const ShippedModel& m) {
    const auto& sizes = model_sizes();
    return static_cast<size_t>(std::find(sizes.begin(), sizes.end(), m.metadata.size) -
                               sizes.begin());
  };
  std::stable_sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    return std::make_pair(kind_rank(a), size_rank(a)) < std::make_pair(kind_rank(b), size_rank(b));
  });
  return found;
}

std::vector<ShippedModel> find_shipped_models(const std::string& task,
                                              std::vector<std::string>* problems) {
  for (const auto& dir : model_search_dirs()) {
    auto found = find_models_in(dir / task, problems);
    if (!found.empty()) return found;
  }
  return {};
}

}  // namespace npe
