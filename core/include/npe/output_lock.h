#pragma once
// One writer per checkpoint: `npe train` holds this lock on its output while it runs, so that a
// second run on the same file is refused instead of both replacing it in turn. A resumed run
// waits a while for the lock: after a dropped SSH connection the earlier run is still writing
// its final checkpoint, and the new one must continue from that checkpoint, not an older one.

#include <chrono>
#include <filesystem>

namespace npe {

class OutputLock {
 public:
  OutputLock() = default;
  /// Locks `path` through the file "PATH.lock" beside it (holding the owner's process id),
  /// waiting at most `wait` for another process to let go. Throws Error naming the file and
  /// that process when it keeps it. Where the lock file cannot be made (a read-only folder) no
  /// lock is taken: writing the checkpoint then fails with its own message.
  static OutputLock acquire(const std::filesystem::path& path, std::chrono::milliseconds wait);
  ~OutputLock();
  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&& other) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  bool held() const { return m_fd >= 0; }
  /// Lets go (and removes the lock file) before the destructor would.
  void release();

 private:
  int m_fd = -1;
  std::filesystem::path m_lock_path;
};

}  // namespace npe
