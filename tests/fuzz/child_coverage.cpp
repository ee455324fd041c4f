// The gridded readers run NetCDF-4 and GRIB files in a forked child (child_process.cpp), whose
// coverage counters are its own copy: without this file libFuzzer would never see which
// branches of those readers an input reached, and would mutate blind. Before each fork a
// shared page range is cleared; the child copies its counters there before it exits, and the
// parent takes them over. A child that dies (a signal, a sanitizer report) hands back nothing.

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

// The linker's bounds of the inline 8-bit counters (-fsanitize-coverage=inline-8bit-counters),
// the same range libFuzzer registers at start-up.
extern "C" uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern "C" uint8_t __stop___sancov_cntrs[] __attribute__((weak));

namespace {

uint8_t* g_shared = nullptr;

size_t counter_count() {
  return __start___sancov_cntrs && __stop___sancov_cntrs
             ? static_cast<size_t>(__stop___sancov_cntrs - __start___sancov_cntrs)
             : 0;
}

}  // namespace

extern "C" void npe_fuzz_before_child() {
  const size_t count = counter_count();
  if (count == 0) return;
  if (!g_shared) {
    void* shared =
        ::mmap(nullptr, count, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return;
    g_shared = static_cast<uint8_t*>(shared);
  }
  std::memset(g_shared, 0, count);
}

extern "C" void npe_fuzz_child_exiting() {
  if (g_shared) std::memcpy(g_shared, __start___sancov_cntrs, counter_count());
}

extern "C" void npe_fuzz_after_child_ended() {
  if (!g_shared) return;
  // The child's counters began as a copy of the parent's, so the larger of the two is the
  // parent's count plus what the child added.
  const size_t count = counter_count();
  for (size_t i = 0; i < count; ++i)
    __start___sancov_cntrs[i] = std::max(__start___sancov_cntrs[i], g_shared[i]);
}
