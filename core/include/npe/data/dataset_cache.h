#pragma once
// Datasets read from files once per process and shared by every task source of the same file:
// they are large (47 MB for Fashion-MNIST's training set) and never change while running.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>

namespace npe {

/// The data `read()` returns for (`path`, `part`), read on the first call only; `part` tells
/// apart several reads of one file (an ERA5 variable). Thread-safe; a read that throws is not
/// cached (the next call tries again).
template <typename T, typename Read>
std::shared_ptr<const T> cached_dataset(const std::filesystem::path& path, const std::string& part,
                                        Read&& read) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const T>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  const auto key = (ec ? path : canonical).string() + "\n" + part;
  if (const auto found = cache.find(key); found != cache.end()) return found->second;
  auto data = std::make_shared<const T>(std::forward<Read>(read)());
  cache.emplace(key, data);
  return data;
}

}  // namespace npe
