#pragma once
// Datasets read from files once per process and shared by every task source of the same file:
// they are large (47 MB for Fashion-MNIST's training set). A file or folder changed since it was
// read (the user edits their series, adds pictures to the folder while the GUI runs) is read
// again; task sources made before keep the data they were made with.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>

namespace npe {

/// What changes when a file or folder changes: its size and modification time, or for a folder
/// the number, sizes and latest modification time of everything in it, sub-folders included.
/// Empty where it cannot be read (the reader then says why).
std::string dataset_stamp(const std::filesystem::path& path);

/// The data `read()` returns for (`path`, `part`), read on the first call and again when the file
/// or folder has changed since (dataset_stamp); `part` tells apart several reads of one file (an
/// ERA5 variable). Thread-safe; a read that throws is not cached (the next call tries again).
template <typename T, typename Read>
std::shared_ptr<const T> cached_dataset(const std::filesystem::path& path, const std::string& part,
                                        Read&& read) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::string, std::shared_ptr<const T>>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  const auto key = (ec ? path : canonical).string() + "\n" + part;
  const auto stamp = dataset_stamp(path);
  if (const auto found = cache.find(key); found != cache.end() && found->second.first == stamp) {
    return found->second.second;
  }
  auto data = std::make_shared<const T>(std::forward<Read>(read)());
  cache[key] = {stamp, data};
  return data;
}

}  // namespace npe
