#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

// Defined only by a fuzz harness that runs the readers in a long-lived process of its own
// (tests/fuzz/reader_server.cpp), null in every other program: there the work runs in this
// process, since a fork of an AddressSanitizer process costs more than most reads, and the
// harness contains crashes and stalls by restarting that process.
extern "C" __attribute__((weak)) bool npe_fuzz_work_in_this_process();

namespace npe {
namespace {

constexpr char kProgress = 'p', kResult = 'r', kError = 'e';
constexpr size_t kFrameHeader = 1 + sizeof(std::uint64_t);

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;  // the parent is gone: nobody is left to tell
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
}

std::string seconds(std::chrono::milliseconds limit) {
  const auto tenths = limit.count() / 100;
  return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "") +
         " s";
}

}  // namespace

void ChildChannel::progress() {
  const auto now = std::chrono::steady_clock::now();
  if (now - m_last_progress < std::chrono::milliseconds(50)) return;
  m_last_progress = now;
  write_all(m_fd, &kProgress, 1);
}

void ChildChannel::frame(char kind, const std::string& bytes) {
  std::array<char, kFrameHeader> header{kind};
  const std::uint64_t size = bytes.size();
  std::memcpy(header.data() + 1, &size, sizeof size);
  write_all(m_fd, header.data(), header.size());
  write_all(m_fd, bytes.data(), bytes.size());
}

void ChildChannel::result(const std::string& bytes) {
  frame(kResult, bytes);
}
void ChildChannel::error(const std::string& message) {
  frame(kError, message);
}

namespace {

// What the child sent (heartbeats, then one frame) and how it ended: its result, or a throw.
std::string result_of(std::string received, int status) {
  const size_t start = received.find_first_not_of(kProgress);
  if (start != std::string::npos && received.size() - start >= kFrameHeader) {
    std::uint64_t size = 0;
    std::memcpy(&size, received.data() + start + 1, sizeof size);
    const char kind = received[start];
    if (received.size() - start - kFrameHeader == size && (kind == kResult || kind == kError)) {
      received.erase(0, start + kFrameHeader);
      if (kind == kResult) return received;
      throw ChildFailure{ChildFailure::Kind::Error, received};
    }
  }
  if (WIFSIGNALED(status))
    throw ChildFailure{ChildFailure::Kind::Crashed,
                       std::string("crashed (") + ::strsignal(WTERMSIG(status)) + ")"};
  throw ChildFailure{ChildFailure::Kind::Crashed,
                     "ended without a result (exit status " +
                         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")"};
}

void run_work(const std::function<void(ChildChannel&)>& work, ChildChannel& channel) {
  try {
    work(channel);
  } catch (const std::exception& e) {
    channel.error(e.what());
  } catch (...) {
    channel.error("unknown error");
  }
}

// The fuzz harness's path: the same work and channel, through a file in memory.
std::string run_here(const std::function<void(ChildChannel&)>& work) {
  const int fd = ::memfd_create("npe-child-channel", MFD_CLOEXEC);
  if (fd < 0)
    throw ChildFailure{ChildFailure::Kind::Error,
                       std::string("cannot create a channel: ") + std::strerror(errno)};
  ChildChannel channel(fd);
  run_work(work, channel);
  std::string received;
  std::array<char, 1 << 16> buffer{};
  ssize_t got = 0;
  for (off_t at = 0; (got = ::pread(fd, buffer.data(), buffer.size(), at)) > 0; at += got)
    received.append(buffer.data(), static_cast<size_t>(got));
  ::close(fd);
  return result_of(std::move(received), 0);
}

}  // namespace

std::string run_in_child(const std::function<void(ChildChannel&)>& work,
                         std::chrono::milliseconds stall_limit) {
  if (npe_fuzz_work_in_this_process && npe_fuzz_work_in_this_process()) return run_here(work);
  std::array<int, 2> pipe_ends{};
  if (::pipe2(pipe_ends.data(), O_CLOEXEC) != 0)
    throw ChildFailure{ChildFailure::Kind::Error,
                       std::string("cannot create a pipe: ") + std::strerror(errno)};
  const auto [from_child, to_parent] = pipe_ends;
  const pid_t child = ::fork();
  if (child < 0) {
    const int error = errno;
    ::close(from_child);
    ::close(to_parent);
    throw ChildFailure{ChildFailure::Kind::Error,
                       std::string("cannot start a child process: ") + std::strerror(error)};
  }
  if (child == 0) {
    // A library crashing on a corrupt file is what the child is for: the parent reports it as an
    // error, so the program's crash report (npe/crash_report.h) stays quiet here.
    for (int signal_number : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
      ::signal(signal_number, SIG_DFL);
    // A program may block the stop signals in its threads and take them on a thread of its own
    // (npe does), which the child does not have: Ctrl-C and kill end it at once.
    sigset_t stop;
    sigemptyset(&stop);
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, signal_number);
    ::pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
    ::close(from_child);
    ChildChannel channel(to_parent);
    run_work(work, channel);
    // No exit handlers or destructors of the parent's objects: they belong to the parent.
    ::_exit(0);
  }

  ::close(to_parent);
  std::string received;
  std::array<char, 1 << 16> buffer{};
  bool stalled = false;
  for (;;) {
    pollfd ready{from_child, POLLIN, 0};
    const int events = ::poll(&ready, 1, static_cast<int>(stall_limit.count()));
    if (events < 0 && errno == EINTR) continue;
    if (events == 0) {
      stalled = true;
      ::kill(child, SIGKILL);
      break;
    }
    const ssize_t got = events < 0 ? -1 : ::read(from_child, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of file: the child is done (or the pipe failed)
    received.append(buffer.data(), static_cast<size_t>(got));
  }
  ::close(from_child);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }

  if (stalled)
    throw ChildFailure{ChildFailure::Kind::Stalled, "no progress for " + seconds(stall_limit)};
  return result_of(std::move(received), status);
}

}  // namespace npe
