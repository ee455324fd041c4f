#include "npe/data/dataset_cache.h"

#include <chrono>

namespace npe {

std::string dataset_stamp(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec) return {};
  const auto ticks = [](fs::file_time_type time) {
    return std::to_string(time.time_since_epoch().count());
  };
  if (!fs::is_directory(status)) {
    const auto size = fs::file_size(path, ec);
    const auto time = fs::last_write_time(path, ec);
    return ec ? std::string() : std::to_string(size) + "@" + ticks(time);
  }
  // A folder: entries added or removed change the count, rewritten ones a size or the latest
  // time (a folder's own time changes when an entry is added, removed or renamed in it).
  uintmax_t count = 0, bytes = 0;
  auto latest = fs::last_write_time(path, ec);
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    ++count;
    std::error_code entry_ec;
    if (it->is_regular_file(entry_ec)) bytes += it->file_size(entry_ec);
    const auto time = it->last_write_time(entry_ec);
    if (!entry_ec && time > latest) latest = time;
  }
  return std::to_string(count) + " entries, " + std::to_string(bytes) + " bytes@" + ticks(latest);
}

}  // namespace npe
