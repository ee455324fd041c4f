// The gridded readers run NetCDF-4 and GRIB files in a forked child (child_process.cpp). The
// child's coverage counters and its sanitizer reports are its own: without this file libFuzzer
// would mutate blind in those readers, and a memory error or undefined behaviour there would
// only read as "failed on this file" to the parent, which goes on. So:
// - before each fork a shared page range is cleared; the child copies its counters there before
//   it exits, and the parent takes them over;
// - a sanitizer report in the child marks that shared range as it dies, and the parent then
//   aborts, so that libFuzzer stops and keeps the input as a crash;
// - a signal in the child is not a finding: it is a library crashing on a corrupt file
//   (ecCodes' SIGFPE, HDF5's SIGSEGV), which the child exists to contain and the program
//   reports as "failed on this file". The child gets the default signal actions for those.

#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// The linker's bounds of the inline 8-bit counters (-fsanitize-coverage=inline-8bit-counters),
// the same range libFuzzer registers at start-up.
extern "C" uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern "C" uint8_t __stop___sancov_cntrs[] __attribute__((weak));

namespace {

// Shared with the child: one flag byte, then a copy of the counters.
uint8_t* g_shared = nullptr;
constexpr size_t kCounters = 1;

size_t counter_count() {
  return __start___sancov_cntrs && __stop___sancov_cntrs
             ? static_cast<size_t>(__stop___sancov_cntrs - __start___sancov_cntrs)
             : 0;
}

void mark_sanitizer_report() {
  if (g_shared) g_shared[0] = 1;
}

}  // namespace

extern "C" void npe_fuzz_before_child() {
  const size_t size = kCounters + counter_count();
  if (!g_shared) {
    void* shared = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return;
    g_shared = static_cast<uint8_t*>(shared);
  }
  std::memset(g_shared, 0, size);
}

extern "C" void npe_fuzz_child_started() {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    ::sigaction(signal, &default_action, nullptr);
  // Replaces libFuzzer's callback in the child only: the parent decides what to keep.
  __sanitizer_set_death_callback(mark_sanitizer_report);
}

extern "C" void npe_fuzz_child_exiting() {
  if (g_shared) std::memcpy(g_shared + kCounters, __start___sancov_cntrs, counter_count());
}

extern "C" void npe_fuzz_after_child_ended() {
  if (!g_shared) return;
  if (g_shared[0]) {
    std::fprintf(stderr, "fuzz: a sanitizer report in the reader's child process (above)\n");
    std::abort();
  }
  // The child's counters began as a copy of the parent's, so the larger of the two is the
  // parent's count plus what the child added.
  const size_t count = counter_count();
  for (size_t i = 0; i < count; ++i)
    __start___sancov_cntrs[i] = std::max(__start___sancov_cntrs[i], g_shared[kCounters + i]);
}
