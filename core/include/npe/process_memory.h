#pragma once
// Resident memory of this process, for memory benchmarks and the tests that bound memory
// growth: read from /proc/self/status (Linux); elsewhere every figure is 0 and the peak cannot
// be reset.

#include <cstdint>

namespace npe {

struct ProcessMemory {
  int64_t resident_bytes = 0;       ///< VmRSS now
  int64_t peak_resident_bytes = 0;  ///< VmHWM: the most resident at any time (since a reset)
};

ProcessMemory process_memory();

/// Lowers the peak to the current resident size (Linux 4.0+: /proc/self/clear_refs, "5"), so
/// that a later peak measures one piece of work. Returns false where that is not possible.
bool reset_peak_resident_memory();

/// Memory the system could give a process now without swapping (MemAvailable of
/// /proc/meminfo); 0 where that is not known.
int64_t available_system_memory();

}  // namespace npe
