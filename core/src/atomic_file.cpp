#include "npe/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "npe/errors.h"

namespace npe {
namespace {

constexpr const char* kTemporaryMarker = ".tmp-";

// PATH.tmp-PID-N: the writer's process id tells a temporary whose writer was killed (the window
// killed during Save session) from one being written now.
std::filesystem::path temporary_sibling(const std::filesystem::path& path) {
  std::random_device random;
  return path.string() + kTemporaryMarker + std::to_string(::getpid()) + "-" +
         std::to_string(random());
}

// The process that wrote the temporary `name` (PATH.tmp-PID-N) has ended. False when the name
// does not say (an older PATH.tmp-N) or the process is alive.
bool writer_has_ended(const std::string& name, size_t prefix_size) {
  const auto rest = name.substr(prefix_size);
  const auto dash = rest.find('-');
  if (dash == std::string::npos || dash == 0) return false;
  long pid = 0;
  for (size_t i = 0; i < dash; ++i) {
    if (rest[i] < '0' || rest[i] > '9' || pid > 1'000'000'000L) return false;
    pid = pid * 10 + (rest[i] - '0');
  }
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Removes the temporaries of `path` for which `stale(name, prefix size)` holds.
template <class Stale>
void remove_temporaries(const std::filesystem::path& path, Stale stale) {
  const auto folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const auto prefix = path.filename().string() + kTemporaryMarker;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(folder, ec)) {
    const auto name = item.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0 && stale(name, prefix.size())) {
      std::filesystem::remove(item.path(), ec);
    }
  }
}

// Flushes a file's (or folder's) contents to the disk: a rename is only as durable as what it
// renames, so without this a power loss right after the rename can leave an empty file.
bool sync_to_disk(const std::filesystem::path& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) return false;
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  return synced;
}

// Makes `tmp` durable and renames it over `path`; removes `tmp` and returns the reason on
// failure (empty on success).
std::string commit_temporary(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  if (!sync_to_disk(tmp, false)) {
    const std::string reason = std::string("cannot flush it to disk: ") + std::strerror(errno);
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return reason;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return ec.message();
  }
  const auto folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  sync_to_disk(folder, true);  // best effort: some file systems refuse to sync folders
  return {};
}

}  // namespace

void write_atomically(const std::filesystem::path& path,
                      const std::function<bool(const std::filesystem::path& temporary)>& write) {
  const auto tmp = temporary_sibling(path);
  bool written = false;
  try {
    written = write(tmp);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
  if (!written) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw Error("cannot write '" + path.string() + "'");
  }
  const auto problem = commit_temporary(tmp, path);
  if (!problem.empty()) throw Error("cannot replace '" + path.string() + "': " + problem);
  // What earlier writers of this file that were killed mid-write left behind.
  remove_temporaries(path, writer_has_ended);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
  write_atomically(path, [&](const std::filesystem::path& tmp) {
    // POSIX calls rather than a stream, so that the message says why (a full disk, a quota).
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    std::string problem = fd < 0 ? std::strerror(errno) : "";
    size_t done = 0;
    while (problem.empty() && done < contents.size()) {
      const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) problem = n < 0 ? std::strerror(errno) : "the disk accepted no more bytes";
      done += n > 0 ? static_cast<size_t>(n) : 0;
    }
    if (fd >= 0 && ::close(fd) != 0 && problem.empty()) problem = std::strerror(errno);
    if (!problem.empty()) throw Error("cannot write '" + path.string() + "': " + problem);
    return true;
  });
}

void remove_stale_temporaries(const std::filesystem::path& path) {
  remove_temporaries(path, [](const std::string&, size_t) { return true; });
}

}  // namespace npe
