#include "peak_bench.h"

#include <cstdio>
#include <memory>
#include <string>

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "bench_common.h"
#include "cpu_peak.h"
#include "npe/blas_kernels.h"
#include "npe/models/auto_precision.h"
#include "npe/models/compute_settings.h"
#include "npe/runtime.h"

namespace npe::cli {
namespace {

struct PeakArguments {
  double seconds = 0.6;
  bool json = false;
};

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

int bench_peak(const PeakArguments& a) {
  configure_allocator();
  // One core: the probes run on the calling thread, and the tile products are the kernel's
  // per-thread work.
  configure_threads(1);
  const auto peak = measure_cpu_peak(a.seconds);
  // The models' other products (linear layers) go through libtorch to the BLAS library, whose
  // kernels are chosen at load time (npe/blas_kernels.h).
  const auto blas = describe_blas_kernels();
  const double blas_gflops = matmul_peak_gflops(torch::kCPU, 2048);
  if (a.json) {
    nlohmann::json row{{"fp32_instruction", peak.fp32_instruction},
                       {"fp32_instruction_gflops", optional_number(peak.fp32_instruction_gflops)},
                       {"bf16_instruction_gflops", optional_number(peak.bf16_instruction_gflops)},
                       {"fp32_tile_gflops", peak.fp32_tile_gflops},
                       {"bf16_tile_gflops", optional_number(peak.bf16_tile_gflops)},
                       {"tile_product", peak.tile_uses_onednn ? "oneDNN" : "libtorch"},
                       {"blas", blas},
                       {"blas_matmul_gflops", blas_gflops},
                       {"libtorch", libtorch_version()}};
    std::printf("%s\n", row.dump().c_str());
    return 0;
  }
  std::printf("one core's arithmetic peak (best of 3 rounds of %.2f s each)\n", a.seconds / 3);
  std::printf("instructions, registers only:\n");
  if (peak.fp32_instruction_gflops) {
    std::printf("  fp32 %-26s %8.1f GFLOP/s\n", (peak.fp32_instruction + ":").c_str(),
                *peak.fp32_instruction_gflops);
  } else {
    std::printf("  fp32 multiply-add: not timed on this CPU (x86-64 FMA only)\n");
  }
  if (peak.bf16_instruction_gflops) {
    std::printf("  bf16 %-26s %8.1f GFLOP/s",
                "dot product (AVX512-BF16):", *peak.bf16_instruction_gflops);
    if (peak.fp32_instruction_gflops)
      std::printf("  (%.2fx fp32)", *peak.bf16_instruction_gflops / *peak.fp32_instruction_gflops);
    std::printf("\n");
  } else {
    std::printf("  bf16 dot product: no AVX512-BF16 on this CPU\n");
  }
  std::printf("TE attention tile product [rows,128] x [128,128] + bias, ReLU (%s):\n",
              peak.tile_uses_onednn ? "oneDNN" : "libtorch");
  std::printf("  fp32, 2048 rows %18s %8.1f GFLOP/s\n", "", peak.fp32_tile_gflops);
  if (peak.bf16_tile_gflops) {
    std::printf("  bf16, 4096 rows %18s %8.1f GFLOP/s  (%.2fx fp32)\n", "", *peak.bf16_tile_gflops,
                *peak.bf16_tile_gflops / peak.fp32_tile_gflops);
  } else {
    std::printf("  bf16: not timed, %s\n", bf16_unavailable_reason().c_str());
  }
  std::printf("float32 matrix product 2048 x 2048 through libtorch (BLAS: %s):\n",
              blas.empty() ? "not OpenBLAS" : ("OpenBLAS " + blas).c_str());
  std::printf("  %34s %8.1f GFLOP/s\n", "", blas_gflops);
  return 0;
}

}  // namespace

Command add_peak_bench(CLI::App& bench) {
  auto* peak = bench.add_subcommand(
      "peak", "One core's fp32 and bf16 arithmetic peak: instructions and the TE tile product");
  auto args = std::make_shared<PeakArguments>();
  peak->add_option("--seconds", args->seconds, "Time per probe (three rounds)")
      ->check(CLI::Range(0.03, 60.0))
      ->capture_default_str();
  peak->add_flag("--json", args->json, "Print one JSON row");
  return {peak, [args] { return bench_peak(*args); }};
}

}  // namespace npe::cli
