#include "npe/process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace npe {

ProcessMemory process_memory() {
  ProcessMemory memory;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    // Lines read "VmRSS:     123456 kB".
    auto kilobytes = [&] {
      std::istringstream fields(line.substr(line.find(':') + 1));
      int64_t value = 0;
      fields >> value;
      return value * 1024;
    };
    if (line.rfind("VmRSS:", 0) == 0) memory.resident_bytes = kilobytes();
    if (line.rfind("VmHWM:", 0) == 0) memory.peak_resident_bytes = kilobytes();
  }
  return memory;
}

bool reset_peak_resident_memory() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  if (!clear_refs) return false;
  clear_refs << "5" << std::flush;
  if (!clear_refs) return false;
  // The kernel sets the peak to the current size; confirm, since old kernels ignore "5".
  const auto after = process_memory();
  return after.peak_resident_bytes > 0 &&
         after.peak_resident_bytes <= after.resident_bytes + (int64_t{4} << 20);
}

int64_t available_system_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  int64_t kilobytes = 0;
  std::string unit;
  while (meminfo >> name >> kilobytes) {
    std::getline(meminfo, unit);
    if (name == "MemAvailable:") return kilobytes * 1024;
  }
  return 0;
}

}  // namespace npe
