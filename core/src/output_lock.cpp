#include "npe/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>

#include "npe/errors.h"

namespace npe {
namespace {

// The process id the holder wrote into the lock file ("" when it cannot be read).
std::string holder_of(int fd) {
  char buffer[32] = {};
  const auto n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string text(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

OutputLock OutputLock::acquire(const std::filesystem::path& path, std::chrono::milliseconds wait) {
  // One lock file whatever the spelling of the path ("t.pt", "./t.pt", through a link).
  std::error_code ignored;
  auto resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ignored);
  if (resolved.empty()) resolved = path;
  const auto lock_path = std::filesystem::path(resolved.string() + ".lock");
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return {};  // no lock possible here; the checkpoint write reports the folder
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // The holder before us removes the file as it lets go: a lock on a file no longer at
      // lock_path guards nothing, so take the one now there.
      struct stat locked {
      }, named{};
      if (::fstat(fd, &locked) == 0 && ::stat(lock_path.c_str(), &named) == 0 &&
          locked.st_ino == named.st_ino && locked.st_dev == named.st_dev) {
        const auto pid = std::to_string(::getpid()) + "\n";
        if (::ftruncate(fd, 0) == 0) (void)::pwrite(fd, pid.data(), pid.size(), 0);
        OutputLock lock;
        lock.m_fd = fd;
        lock.m_lock_path = lock_path;
        return lock;
      }
      ::close(fd);
      continue;
    }
    const int error = errno;
    const auto holder = holder_of(fd);
    ::close(fd);
    if (error != EWOULDBLOCK) return {};  // a file system without flock: no lock
    if (std::chrono::steady_clock::now() >= deadline) {
      throw Error("another npe train" +
                  (holder.empty() ? std::string() : " (process " + holder + ")") + " is writing " +
                  path.string() + ": stop it first, or write to another file (--out)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

OutputLock::~OutputLock() {
  release();
}

OutputLock::OutputLock(OutputLock&& other) noexcept
    : m_fd(other.m_fd), m_lock_path(std::move(other.m_lock_path)) {
  other.m_fd = -1;
}

OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = other.m_fd;
    m_lock_path = std::move(other.m_lock_path);
    other.m_fd = -1;
  }
  return *this;
}

void OutputLock::release() {
  if (m_fd < 0) return;
  // Removed while still held, so that nobody locks the file between the two steps and then
  // finds it gone (acquire checks that what it locked is still the file at the path).
  ::unlink(m_lock_path.c_str());
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace npe
