#pragma once
// Running a third-party library's work on an untrusted file in a child process, so that a hang
// or a crash inside the library becomes an error message instead of a stuck or dead program.
//
// HDF5 (under libnetcdf's NetCDF-4 reader) never returns on some corrupt files
// (fuzz_gridded_field found one: > 300 s in its metadata cache); a call stuck inside a C library
// cannot be cancelled from another thread, and it would hold the NetCDF lock for the life of
// the process. A forked child can be killed.

#include <chrono>
#include <functional>
#include <string>

namespace npe {

/// The child's side: progress heartbeats and the result.
class ChildChannel {
 public:
  explicit ChildChannel(int fd) : m_fd(fd) {}
  /// Tells the parent the work is still moving (cheap: at most one write per 50 ms).
  void progress();
  /// The bytes the parent's run_in_child returns.
  void result(const std::string& bytes);
  /// A message the parent throws as a ChildFailure.
  void error(const std::string& message);

 private:
  void frame(char kind, const std::string& bytes);
  int m_fd;
  std::chrono::steady_clock::time_point m_last_progress{};
};

/// What went wrong in the child: its own error message, a crash (signal) or a stall.
struct ChildFailure {
  enum class Kind { Error, Crashed, Stalled };
  Kind kind;
  std::string message;
};

/// Forks; the child runs `work`, which must report through the channel (result or error) and
/// must not use threads (OpenMP, libtorch) — only the forking thread exists in the child. The
/// parent waits until the child ends, killing it when it sends nothing (no progress) for
/// `stall_limit`. Returns the child's result; throws ChildFailure otherwise.
std::string run_in_child(const std::function<void(ChildChannel&)>& work,
                         std::chrono::milliseconds stall_limit);

}  // namespace npe
