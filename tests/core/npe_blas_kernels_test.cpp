// Which OpenBLAS kernels a program asks for (npe/blas_kernels.h): better ones only where
// OpenBLAS fell back to generic kernels below what the CPU runs.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "npe/blas_kernels.h"
#include "npe/cpu_info.h"

namespace npe {
namespace {

CpuInfo cpu_with(const std::string& flags) {
  return parse_cpuinfo(
      "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) "
      "Processor\nflags\t\t: " +
      flags + "\n");
}

TEST(BlasKernels, GenericFallbacksGiveWayToTheKernelsTheCpuRuns) {
  const auto avx512 =
      cpu_with("fpu sse3 avx avx2 fma avx512f avx512dq avx512bw avx512vl avx512_bf16");
  const auto avx2 = cpu_with("fpu sse3 avx avx2 fma");
  const auto sse = cpu_with("fpu sse sse2 sse3");
  EXPECT_EQ(better_openblas_core("Prescott", avx512), "SkylakeX");
  EXPECT_EQ(better_openblas_core("Prescott", avx2), "Haswell");
  EXPECT_EQ(better_openblas_core("Sandybridge", avx2), "Haswell");
  EXPECT_EQ(better_openblas_core("Opteron(SSE3)", avx2), "Haswell");
  // AVX-512 F alone (no BW, VL, DQ) is not enough for SkylakeX's kernels.
  EXPECT_EQ(better_openblas_core("Nehalem", cpu_with("avx2 fma avx512f")), "Haswell");
  // What OpenBLAS chose for a CPU it knows stands, and a CPU without AVX2 keeps the fallback.
  for (const char* known : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"}) {
    EXPECT_FALSE(better_openblas_core(known, avx512).has_value()) << known;
  }
  EXPECT_FALSE(better_openblas_core("Prescott", sse).has_value());
  EXPECT_FALSE(better_openblas_core("", avx512).has_value());
}

// The suites' main sets the kernels up as the programs do: unless the environment chose them,
// no better kernels are left for this CPU.
TEST(BlasKernels, ThisProcessRunsKernelsItsCpuRuns) {
  const auto core = openblas_core();
  if (core.empty()) GTEST_SKIP() << "libtorch does not use OpenBLAS here";
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr &&
      std::getenv("NPE_OPENBLAS_REPLACED_CORE") == nullptr) {
    GTEST_SKIP() << "OPENBLAS_CORETYPE chose " << core;
  }
  EXPECT_FALSE(better_openblas_core(core, this_cpu()).has_value()) << describe_blas_kernels();
  // Run again or not, the process keeps its program's name (ps, top, pkill): an exec of
  // /proc/self/exe would have named it "exe".
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  EXPECT_NE(name, "exe");
}

}  // namespace
}  // namespace npe
