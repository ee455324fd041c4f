#pragma once
// What "auto" precision (compute_settings.h) chooses on this CPU, and from what. A timing taken
// at start-up is disturbed by whatever else runs (beside another training job the fused TE
// kernel once read 0.13x faster in bf16 where alone it reads 1.65x), so the timing is trusted
// only when the machine was quiet while it ran, and kept: later runs on this CPU read it back.
// On a busy machine with nothing kept, the CPU's bf16 instructions decide.

#include <filesystem>
#include <string>

#include "npe/cpu_info.h"
#include "npe/models/compute_settings.h"

namespace npe {

struct AutoPrecision {
  enum class Basis {
    no_bf16,   ///< this CPU cannot run the kernel in bfloat16
    measured,  ///< timed now on a quiet machine (and kept in the cache file)
    cached,    ///< a quiet timing of an earlier run on this CPU and libtorch
    cpu,       ///< the machine was busy: the CPU's instructions decided (cpu_prefers_bf16)
  };
  Precision precision = Precision::fp32;
  Basis basis = Basis::no_bf16;
  /// How many times faster the fused TE kernel ran in bf16 than in fp32 (the timing behind the
  /// choice; for Basis::cpu the disturbed one); 0 where this CPU has no bf16 products.
  double speedup = 0.0;
  /// Cores other programs kept busy during the timing (-1 where not known or not timed now).
  double other_cores = -1.0;
  /// For the start line, e.g. "the TE kernel's bf16 speedup is 1.59x on this CPU (timed
  /// 2026-12-03 on a quiet machine, kept in ~/.cache/npe/bf16-speedup.json)".
  std::string reason;
};

/// "auto" precision, decided once per process with the cache file bf16_speedup_cache_file().
const AutoPrecision& auto_precision();

/// The decision itself, every call (tests): reads `cache_file` for this CPU and libtorch, else
/// times the kernel and, where the machine was quiet, writes the timing there (atomically; a
/// file that cannot be written only goes unwritten). An empty path: no cache.
AutoPrecision decide_auto_precision(const std::filesystem::path& cache_file);

/// Where quiet timings are kept: $NPE_CACHE_DIR, else $XDG_CACHE_HOME/npe, else ~/.cache/npe,
/// file bf16-speedup.json; empty where none of these is set.
std::filesystem::path bf16_speedup_cache_file();

/// bf16 by the CPU's instructions alone: AMX-BF16 (Intel Sapphire Rapids and later) or
/// AVX512-BF16 on AMD (Zen 4: 1.6x measured); not AVX512-BF16 alone on Intel (Cooper Lake:
/// the training step ran 12 % slower in bf16, 2026-11-23) nor a CPU without either.
bool cpu_prefers_bf16(const CpuInfo& cpu);

/// The CPU as a kept timing names it: its model and its bf16-related instructions, e.g. "Intel(R)
/// Xeon(R) Processor [avx512_bf16 amx_bf16]" (virtual machines report one model name for
/// several generations).
std::string bf16_cpu_key(const CpuInfo& cpu);

/// How many times faster the fused TE attention kernel (forward and backward, one tile of the
/// training workload's shape) runs on this CPU in bfloat16 than in float32, timed now (the
/// precisions alternating, best of at least 7 each over at least 0.3 s), with the
/// cores other programs used meanwhile. speedup is 0 where this CPU cannot run the kernel in
/// bfloat16 (bf16_unavailable_reason() says why).
struct Bf16Timing {
  double speedup = 0.0;
  double other_cores = -1.0;
};
Bf16Timing time_bf16_speedup();

/// Empty where the fused TE attention kernel runs in bfloat16 on this CPU; else why not (oneDNN
/// builds no bfloat16 products on CPUs without AVX-512, e.g. some AMD EPYC). Checked once.
const std::string& bf16_unavailable_reason();

/// "auto" picks bf16 above this speedup of the kernel: the rest of a training step gains less.
inline constexpr double kAutoBf16Speedup = 1.15;

/// A timing is trusted (and kept) where other programs used at most this many cores meanwhile.
inline constexpr double kQuietOtherCores = 0.25;

}  // namespace npe
