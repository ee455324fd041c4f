#pragma once
// The arithmetic peak of one core of this CPU, for reading the precision benchmarks: whether
// bfloat16 can be faster than float32 here at all. Two levels, each timed on the calling
// thread:
//   - instructions: loops of independent multiply-adds kept in registers, float32 FMA on the
//     widest vectors the CPU has (AVX-512 or AVX2) and the AVX512-BF16 dot product (32 bf16
//     products summed into 16 float32 per instruction), where the CPU has it;
//   - the fused TE attention kernel's main tile product (rho's hidden layer: [rows,128] x
//     [128,128] + bias, ReLU) through the project's tile_matmul, in float32 and bfloat16, at
//     the tile heights the kernel uses (2,048 and 4,096 rows).

#include <optional>
#include <string>

namespace npe::cli {

struct CpuPeak {
  std::string fp32_instruction;                   ///< "AVX-512 FMA", "AVX2 FMA" or empty
  std::optional<double> fp32_instruction_gflops;  ///< none: no x86 FMA to time
  std::optional<double> bf16_instruction_gflops;  ///< none: no AVX512-BF16
  double fp32_tile_gflops = 0.0;
  std::optional<double> bf16_tile_gflops;  ///< none: oneDNN has no bf16 products on this CPU
  bool tile_uses_onednn = false;
};

/// Times each probe for about `seconds` (the best of three thirds of it).
CpuPeak measure_cpu_peak(double seconds = 0.6);

}  // namespace npe::cli
