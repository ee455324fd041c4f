#include "npe/cpu_info.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

namespace npe {
namespace {

std::string trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  const auto end = text.find_last_not_of(" \t\r");
  return begin == std::string::npos ? std::string() : text.substr(begin, end - begin + 1);
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Busy clock ticks of all CPUs together: the "cpu" line of /proc/stat less idle and iowait.
long long system_busy_ticks() {
  std::istringstream stat(read_file("/proc/stat"));
  std::string label;
  stat >> label;
  if (label != "cpu") return -1;
  long long total = 0, field = 0;
  for (int i = 0; i < 10 && stat >> field; ++i) {
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already
    // inside user and nice.
    if (i != 3 && i != 4 && i < 8) total += field;
  }
  return total;
}

// This process's user and system ticks (fields 14 and 15 of /proc/self/stat; the command name
// in parentheses may hold spaces, so counting starts after its closing parenthesis).
long long own_ticks() {
  const auto stat = read_file("/proc/self/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  long long utime = -1, stime = -1;
  for (int index = 3; fields >> field; ++index) {
    if (index == 14) utime = std::stoll(field);
    if (index == 15) {
      stime = std::stoll(field);
      break;
    }
  }
  return utime < 0 || stime < 0 ? -1 : utime + stime;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

CpuInfo parse_cpuinfo(const std::string& text) {
  CpuInfo cpu;
  cpu.model = "unknown";
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (trimmed(line).empty()) break;  // the first processor's entry ends at a blank line
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto key = trimmed(line.substr(0, colon));
    const auto value = trimmed(line.substr(colon + 1));
    if (key == "vendor_id") {
      cpu.vendor = value;
    } else if (key == "model name") {
      cpu.model = value;
    } else if (key == "flags") {
      std::istringstream words(value);
      for (std::string flag; words >> flag;) cpu.flags.insert(flag);
    }
  }
  return cpu;
}

const CpuInfo& this_cpu() {
  static const CpuInfo cpu = parse_cpuinfo(read_file("/proc/cpuinfo"));
  return cpu;
}

OtherCpuUse::OtherCpuUse()
    : m_system_busy_ticks(system_busy_ticks()), m_own_ticks(own_ticks()), m_start_s(now_s()) {}

double OtherCpuUse::cores() const {
  const auto system = system_busy_ticks();
  const auto own = own_ticks();
  const double elapsed = now_s() - m_start_s;
  if (system < 0 || own < 0 || m_system_busy_ticks < 0 || m_own_ticks < 0 || elapsed <= 0) {
    return -1.0;
  }
  const double ticks_per_s = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double others = static_cast<double>((system - m_system_busy_ticks) - (own - m_own_ticks));
  return std::max(0.0, others / ticks_per_s / elapsed);
}

}  // namespace npe
