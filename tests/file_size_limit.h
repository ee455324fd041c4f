#pragma once
// A file-size limit standing in for a full disk, for the gtest and the QtTest suites alike.

#include <signal.h>
#include <sys/resource.h>

namespace npe::testing {

/// While it lives, no file this process writes can grow beyond `bytes` (RLIMIT_FSIZE, with
/// SIGXFSZ ignored): a write past it fails with EFBIG ("File too large") the way a full disk
/// fails with ENOSPC. ctest runs every test program in a process of its own, so nothing else is
/// limited.
class ProcessFileSizeLimit {
 public:
  explicit ProcessFileSizeLimit(rlim_t bytes) {
    m_old_handler = ::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &m_old);
    const rlimit limit{bytes, m_old.rlim_max};
    m_set = ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ProcessFileSizeLimit(const ProcessFileSizeLimit&) = delete;
  ProcessFileSizeLimit& operator=(const ProcessFileSizeLimit&) = delete;
  ~ProcessFileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &m_old);
    ::signal(SIGXFSZ, m_old_handler);
  }
  /// Whether the limit took effect.
  bool set() const { return m_set; }

 private:
  rlimit m_old{};
  sighandler_t m_old_handler = SIG_DFL;
  bool m_set = false;
};

}  // namespace npe::testing
