#include "npe/shipped_files.h"

#include <cstdlib>

namespace npe {
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> candidate_dirs(const std::string& kind, const char* environment) {
  std::vector<fs::path> candidates;
  if (const char* env = environment ? std::getenv(environment) : nullptr; env && *env)
    candidates.emplace_back(env);
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "np-explorer" / kind);
#ifdef NPE_SOURCE_DIR
  candidates.push_back(fs::path(NPE_SOURCE_DIR) / kind);
#endif
#ifdef NPE_INSTALL_SHARE_DIR
  candidates.push_back(fs::path(NPE_INSTALL_SHARE_DIR) / kind);
#endif
  return candidates;
}

}  // namespace

std::vector<fs::path> shipped_file_dirs(const std::string& kind, const char* environment) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& dir : candidate_dirs(kind, environment)) {
    if (fs::is_directory(dir, ec)) dirs.push_back(fs::weakly_canonical(dir, ec));
  }
  return dirs;
}

fs::path shipped_data_file(const fs::path& relative) {
  std::error_code ec;
  for (const auto& dir : shipped_file_dirs("data", "NPE_DATA_DIR")) {
    if (fs::exists(dir / relative, ec)) return dir / relative;
  }
  const auto candidates = candidate_dirs("data", "NPE_DATA_DIR");
  return candidates.empty() ? relative : fs::weakly_canonical(candidates.front(), ec) / relative;
}

std::string describe_shipped_data_dirs() {
  std::string text;
  std::error_code ec;
  for (const auto& dir : candidate_dirs("data", "NPE_DATA_DIR"))
    text += (text.empty() ? "" : ", ") + fs::weakly_canonical(dir, ec).string();
  return text;
}

}  // namespace npe
