#pragma once
// What this machine's CPU is (its maker, model and instruction-set flags, from /proc/cpuinfo)
// and how much of it other programs use: what a run-time choice that depends on the CPU rests
// on where a timing cannot be trusted (bf16 or fp32 under "auto" precision, compute_settings.h).

#include <set>
#include <string>

namespace npe {

struct CpuInfo {
  std::string vendor;           ///< "GenuineIntel", "AuthenticAMD", ... ("" where unknown)
  std::string model;            ///< "AMD EPYC 9R14 96-Core Processor" ("unknown" where unknown)
  std::set<std::string> flags;  ///< "avx512f", "avx512_bf16", "amx_bf16", ...

  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
};

/// Parses the text of /proc/cpuinfo (the first processor's entry).
CpuInfo parse_cpuinfo(const std::string& text);

/// This machine's CPU, read once.
const CpuInfo& this_cpu();

/// How many cores other processes kept busy while it lived: the whole system's busy time
/// (/proc/stat) minus this process's own (/proc/self/stat), over the elapsed time. A timing
/// taken while others use a core measures them as much as the code (two training jobs side by
/// side once made a 1.65x speedup read as 0.13x). Negative where /proc cannot be read.
class OtherCpuUse {
 public:
  OtherCpuUse();
  /// Cores in use by other processes on average since construction (0.0 to the core count).
  double cores() const;

 private:
  long long m_system_busy_ticks, m_own_ticks;
  double m_start_s;
};

}  // namespace npe
