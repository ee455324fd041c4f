#pragma once
// Which OpenBLAS kernels libtorch's float32 products run on. OpenBLAS (DYNAMIC_ARCH) picks its
// kernels from the CPU's identification when it is loaded, before main. Debian 12's 0.3.21 does
// not know every CPU a virtual machine reports ("Intel(R) Xeon(R) Processor" with AVX-512 and
// AVX512-BF16) and falls back to its Prescott kernels (SSE3): a 2048 x 2048 product on one core
// ran at 15-28 GFLOP/s there, 85 GFLOP/s with the SkylakeX kernels the CPU can run
// (BENCHMARKS.md, "BLAS kernels"). Every linear layer of every model pays that.

#include <optional>
#include <string>

#include "npe/cpu_info.h"

namespace npe {

/// The kernels OpenBLAS runs in this process ("SkylakeX", "Haswell", "Prescott", ...); empty
/// where libtorch does not use OpenBLAS.
std::string openblas_core();

/// The kernels to ask for (OPENBLAS_CORETYPE) when OpenBLAS chose `chosen` on a CPU with these
/// flags: SkylakeX where the CPU has AVX-512 (F, BW, VL, DQ), else Haswell where it has AVX2 and
/// FMA, but only when `chosen` is one of the generic pre-AVX2 fallbacks (Prescott, Core2,
/// Nehalem, Sandybridge, ...). A choice OpenBLAS made for a CPU it knows stands.
std::optional<std::string> better_openblas_core(const std::string& chosen, const CpuInfo& cpu);

/// Called first in main, before anything else runs: where OpenBLAS fell back to generic kernels
/// that this CPU outruns and OPENBLAS_CORETYPE is not set (a user's choice always stands), runs
/// the program again in this process (exec of its own file with the same arguments, the
/// same process id) with OPENBLAS_CORETYPE set to better_openblas_core. Returns when nothing is
/// to be done or the exec failed (then the program goes on with OpenBLAS's own choice).
void use_the_cpus_blas_kernels(char** argv);

/// The kernels and who chose them: "Haswell" (OpenBLAS), "SkylakeX (chosen for this CPU;
/// OpenBLAS took it for Prescott)" (use_the_cpus_blas_kernels), "Haswell (OPENBLAS_CORETYPE)"
/// (the user); "" without OpenBLAS.
std::string describe_blas_kernels();

}  // namespace npe
