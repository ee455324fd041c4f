#include "reader_server.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <poll.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

// The linker's bounds of the inline 8-bit counters (-fsanitize-coverage=inline-8bit-counters),
// the same range libFuzzer registers at start-up.
extern "C" uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern "C" uint8_t __stop___sancov_cntrs[] __attribute__((weak));

// child_process.cpp: the readers' work runs in the calling process (the server, and the
// fuzzer's own warm-up read).
extern "C" bool npe_fuzz_work_in_this_process() {
  return true;
}

namespace npe::fuzz {
namespace {

constexpr size_t kFlag = 0, kCounters = 1;  // layout of the shared range
constexpr char kGo = 'g', kDone = 'd', kRetiring = 'r';
// The server retires after this many inputs, or when its resident size passes this.
constexpr long kInputsPerServer = 50'000;
constexpr long kMaxResidentMb = 1536;

uint8_t* g_shared = nullptr;  // for the signal handler and the death callback

size_t counter_count() {
  return __start___sancov_cntrs && __stop___sancov_cntrs
             ? static_cast<size_t>(__stop___sancov_cntrs - __start___sancov_cntrs)
             : 0;
}

void copy_counters_out() {
  if (g_shared) std::memcpy(g_shared + kCounters, __start___sancov_cntrs, counter_count());
}

// Set by the report callback when the report is a library's own fault on a corrupt file.
bool g_library_fault = false;
bool g_report_seen = false;  // an AddressSanitizer report, as opposed to a CHECK or UBSan's

bool frame_is(void* return_address, const char* symbol_part, const char* file_part) {
  Dl_info info{};
  // A return address is just past its call, which may be a function's last instruction.
  if (!::dladdr(static_cast<char*>(return_address) - 1, &info)) return false;
  if (symbol_part && !(info.dli_sname && std::strstr(info.dli_sname, symbol_part))) return false;
  return !file_part || (info.dli_fname && std::strstr(info.dli_fname, file_part));
}

// AddressSanitizer checks a copy's range with a CHECK, not a report, when the length passes
// 2^40 bytes (mem_is_zero under __asan_region_is_poisoned), so only the death callback runs.
// HDF5 1.10 copies a global heap object of a corrupt length of 1.2 TB (H5HG_read, reading
// dimension scales: *-huge-memcpy-hdf5-*), a copy that faults in any build. That death is
// recognised by its stack: the range check, in a copy's interceptor, called from libhdf5.
bool copy_range_check_failed_in(const char* library) {
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  for (int i = 0; i + 2 < count; ++i) {
    if (frame_is(frames[i], "__asan_region_is_poisoned", nullptr))
      return (frame_is(frames[i + 1], "memcpy", nullptr) ||
              frame_is(frames[i + 1], "memmove", nullptr)) &&
             frame_is(frames[i + 2], nullptr, library);
  }
  return false;
}

void mark_finding() {
  if (!g_report_seen && copy_range_check_failed_in("libhdf5_serial.so")) g_library_fault = true;
  if (g_shared && !g_library_fault) g_shared[kFlag] = 1;
}

// The first frame line of the report's section under `heading` that contains none of
// `skipped`; empty if there is none.
std::string_view first_frame_after(const char* report, const char* heading,
                                   std::initializer_list<const char*> skipped) {
  const char* at = std::strstr(report, heading);
  if (!at) return {};
  for (at = std::strchr(at, '\n'); at && at[1] == ' '; at = std::strchr(at + 1, '\n')) {
    const char* line = at + 1;
    const char* end = std::strchr(line, '\n');
    const std::string_view frame(line, end ? static_cast<size_t>(end - line) : std::strlen(line));
    if (frame.find(" #") == std::string_view::npos) break;  // the section's frames have ended
    const bool skip = std::any_of(skipped.begin(), skipped.end(), [&](const char* part) {
      return frame.find(part) != std::string_view::npos;
    });
    if (!skip) return frame;
  }
  return {};
}

// A frame line in a shared library's code, as opposed to the fuzz executable's (which holds
// the project's code, its template instances and the sanitizers' allocator): symbolised
// library frames name their module, "(/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x...)".
bool in_shared_library(std::string_view frame) {
  return frame.find(".so.") != std::string_view::npos ||
         frame.find(".so+") != std::string_view::npos;
}

// Whether the memory a report is about belongs to the project: a heap block whose allocation
// was asked for by the executable's code (past the allocator itself and libstdc++, where
// std::string allocates), or a stack frame of the executable's code. A library writing past
// such a block was handed too small a buffer: the project's bug, whichever library wrote. The
// NetCDF reader once read a coordinate variable lying on another dimension into a buffer sized
// for its own (5000 values into room for 2); HDF5's memcpy overflowed it, and a suppression of
// every HDF5 interceptor report hid it from this fuzzer.
bool memory_is_the_projects(const char* report) {
  auto allocated_by = first_frame_after(
      report, "allocated by thread",
      {" in operator new", " in malloc", " in calloc", " in realloc", "libstdc++.so"});
  if (!allocated_by.empty()) return !in_shared_library(allocated_by);
  const auto stack_frame = first_frame_after(report, "is located in stack of thread", {});
  return !stack_frame.empty() && !in_shared_library(stack_frame);
}

// AddressSanitizer reports that are a library's fault on a corrupt file, as a signal there is:
// the programs' child contains them. They are recognised by the report's text: the frame that
// made the call (#1, under the sanitizer's interceptor) is in HDF5, and the memory is not the
// project's (HDF5 is not instrumented: every report with HDF5 as the caller comes from an
// interceptor, all of which a suppression file used to silence). HDF5 1.10 copies a global heap
// object onto itself (memcpy-param-overlap in H5HG_read: *-memcpy-overlap-hdf5-*) and of length -1
// (negative-size-param, under H5DSget_num_scales: *-negative-size-memcpy-hdf5-*; a copy of 2^64 - 1
// bytes faults in any build), and frees a pointer it never allocated while closing some corrupt
// NetCDF-4 files (H5C__flush_single_entry: *-bad-free-on-close-hdf5-*).
void classify_report(const char* report) {
  g_report_seen = true;
  const char* caller = std::strstr(report, "    #1 ");  // #0 is the sanitizer's interceptor
  if (!caller) return;
  const char* line_end = std::strchr(caller, '\n');
  const std::string_view frame(
      caller, line_end ? static_cast<size_t>(line_end - caller) : std::strlen(caller));
  if (frame.find("libhdf5_serial.so") != std::string_view::npos && !memory_is_the_projects(report))
    g_library_fault = true;
}

// The fuzz executable's code (the project's code, libFuzzer, the sanitizers' runtime), as
// opposed to the shared libraries': [begin, end) of its executable segments' span.
uintptr_t g_own_code_begin = 0, g_own_code_end = 0;

int find_own_code(dl_phdr_info* info, size_t, void*) {
  if (info->dlpi_name && info->dlpi_name[0] != '\0') return 0;  // the executable comes first
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X)) continue;
    const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    if (!g_own_code_begin || begin < g_own_code_begin) g_own_code_begin = begin;
    g_own_code_end = std::max<uintptr_t>(g_own_code_end, begin + segment.p_memsz);
  }
  return 1;
}

// A fault: in a library, that is a library crashing on a corrupt file, which the program
// contains and reports ("failed on this file"); in the executable's own code it is a finding.
// Either way the input's coverage is kept, then the process ends by the signal.
void end_by_signal(int signal, siginfo_t*, void* context) {
  const auto pc =
      static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
  if (signal != SIGABRT && pc >= g_own_code_begin && pc < g_own_code_end) {
    static const char message[] = "fuzz: the reader server faulted in the project's code\n";
    (void)!::write(STDERR_FILENO, message, sizeof message - 1);
    __sanitizer_print_stack_trace();  // best effort, from inside the handler
    mark_finding();
  }
  copy_counters_out();
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

long resident_mb() {
  long pages = 0, resident = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(statm);
  }
  return resident * (::sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

bool read_byte(int fd, char& byte) {
  for (;;) {
    const ssize_t got = ::read(fd, &byte, 1);
    if (got == 1) return true;
    if (got < 0 && errno == EINTR) continue;
    return false;
  }
}

}  // namespace

ReaderServer::ReaderServer(std::function<void()> work, std::chrono::milliseconds limit)
    : m_work(std::move(work)), m_limit(limit) {
  void* shared = ::mmap(nullptr, kCounters + counter_count(), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    std::perror("fuzz: reader server: mmap");
    std::abort();
  }
  m_shared = g_shared = static_cast<uint8_t*>(shared);
}

ReaderServer::~ReaderServer() {
  if (m_pid > 0) {
    ::close(m_socket);  // the server reads end of file and exits
    int status = 0;
    ::waitpid(m_pid, &status, 0);
  }
}

void ReaderServer::start() {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    std::perror("fuzz: reader server: socketpair");
    std::abort();
  }
  std::memset(m_shared, 0, kCounters + counter_count());
  m_pid = ::fork();
  if (m_pid < 0) {
    std::perror("fuzz: reader server: fork");
    std::abort();
  }
  if (m_pid == 0) {
    ::close(ends[0]);
    m_socket = ends[1];
    serve();
  }
  ::close(ends[1]);
  m_socket = ends[0];
}

void ReaderServer::serve() {
  dl_iterate_phdr(find_own_code, nullptr);
  struct sigaction on_crash {};
  on_crash.sa_sigaction = end_by_signal;
  on_crash.sa_flags = SA_SIGINFO;
  for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    ::sigaction(signal, &on_crash, nullptr);
  // Replaces libFuzzer's callback in the server only: the fuzzer decides what to keep.
  __sanitizer_set_death_callback(mark_finding);
  __asan_set_error_report_callback(classify_report);
  char request = 0;
  for (long served = 1; read_byte(m_socket, request); ++served) {
    // Only this input's coverage: libFuzzer clears its own counters the same way.
    std::memset(__start___sancov_cntrs, 0, counter_count());
    try {
      m_work();
    } catch (const std::exception& e) {
      // In the fuzzer itself this would end the run as a crash; so it does here.
      std::fprintf(stderr, "fuzz: the reader server's input threw %s\n", e.what());
      mark_finding();
      ::_exit(1);
    }
    copy_counters_out();
    const bool retiring =
        served >= kInputsPerServer || (served % 256 == 0 && resident_mb() > kMaxResidentMb);
    const char answer = retiring ? kRetiring : kDone;
    if (::send(m_socket, &answer, 1, MSG_NOSIGNAL) != 1 || retiring) break;
  }
  // No exit handlers or destructors of the fuzzer's objects: they belong to the fuzzer.
  ::_exit(0);
}

void ReaderServer::take_coverage() {
  // The server's counters were cleared before the input, so the larger of the two is what
  // either process reached.
  const size_t count = counter_count();
  for (size_t i = 0; i < count; ++i)
    __start___sancov_cntrs[i] = std::max(__start___sancov_cntrs[i], m_shared[kCounters + i]);
  std::memset(m_shared + kCounters, 0, count);
}

bool ReaderServer::ended(bool killed) {
  if (killed) ::kill(m_pid, SIGKILL);
  ::close(m_socket);
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
  m_pid = -1;
  m_socket = -1;
  const bool finding = m_shared[kFlag] != 0;
  m_shared[kFlag] = 0;
  return finding;
}

bool ReaderServer::serve_once() {
  if (m_pid <= 0) start();
  if (::send(m_socket, &kGo, 1, MSG_NOSIGNAL) != 1) {  // it retired or died since: a new one
    if (ended(false)) return true;
    start();
    if (::send(m_socket, &kGo, 1, MSG_NOSIGNAL) != 1) {
      std::perror("fuzz: reader server: send");
      std::abort();
    }
  }
  pollfd ready{m_socket, POLLIN, 0};
  int events = 0;
  while ((events = ::poll(&ready, 1, static_cast<int>(m_limit.count()))) < 0 && errno == EINTR) {
  }
  if (events == 0) return ended(true);  // a stall, as the program's stall limit would stop it
  char answer = 0;
  const bool answered = read_byte(m_socket, answer);
  take_coverage();
  if (!answered || answer == kRetiring) return ended(false);
  return false;
}

void ReaderServer::run() {
  if (!serve_once()) return;
  // A finding must be this input's own, as the programs would meet it in a fresh child: the
  // libraries' state carries over between the inputs one server reads. So the input is read
  // again in a new server that has read nothing before.
  std::fprintf(stderr,
               "fuzz: a finding in the reader server (above); reading the input again "
               "in a fresh one\n");
  if (serve_once()) {
    std::fprintf(stderr,
                 "fuzz: a sanitizer report or a fault in the project's code in a fresh reader "
                 "server (above)\n");
    std::abort();
  }
  std::fprintf(stderr,
               "fuzz: not in a fresh reader server: the finding needed state left by "
               "earlier inputs, which the programs' child per file never has; not kept\n");
}

}  // namespace npe::fuzz
