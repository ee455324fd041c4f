#include "cpu_peak.h"

#include <algorithm>

#include <torch/torch.h>

#include "npe/models/auto_precision.h"
#include "npe/models/compute_settings.h"
#include "npe/models/tile_matmul.h"
#include "stopwatch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPE_X86_PROBES 1
#include <immintrin.h>
#endif

namespace npe::cli {
namespace {

// Runs `probe(n)` (n repetitions, returning the floating-point operations done) for about
// `seconds` in three rounds and returns the best rate in GFLOP/s.
template <typename Probe>
double best_rate(double seconds, Probe probe) {
  int64_t n = 1;
  // Calibrate: double n until one call takes a tenth of a round.
  for (;;) {
    const auto start = Clock::now();
    probe(n);
    if (seconds_since(start) > seconds / 30 || n > (int64_t{1} << 40)) break;
    n *= 2;
  }
  double best = 0.0;
  for (int round = 0; round < 3; ++round) {
    double flops = 0.0;
    const auto start = Clock::now();
    while (seconds_since(start) < seconds / 3) flops += probe(n);
    best = std::max(best, flops / seconds_since(start) / 1e9);
  }
  return best;
}

#ifdef NPE_X86_PROBES
// Each probe starts from a volatile (always 0) and ends in another: a probe that read nothing
// volatile would be a pure function of n, which the compiler may call once for the whole timing
// loop (GCC 12 did), and a result nobody reads may be dropped.
volatile float g_start = 0.0f;
volatile float g_sink = 0.0f;

// Sixteen independent accumulators: enough to cover the latency of either instruction on the
// CPUs seen (4 to 6 cycles at 2 per cycle), few enough to stay in registers.
#define NPE_REPEAT16(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

// A store and a scalar sum, not _mm512_reduce_add_ps: GCC 12 warns inside that intrinsic's
// header (an uninitialised variable it sets up on purpose).
__attribute__((target("avx512f"))) float lane_sum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  return total;
}

__attribute__((target("avx512f"))) float fma_avx512(int64_t n) {
#define NPE_DECLARE(i) __m512 c##i = _mm512_set1_ps(g_start + float(i));
  NPE_REPEAT16(NPE_DECLARE)
  const __m512 a = _mm512_set1_ps(1.0001f), b = _mm512_set1_ps(0.9999f);
  for (int64_t i = 0; i < n; ++i) {
#define NPE_FMA512(i) c##i = _mm512_fmadd_ps(a, b, c##i);
    NPE_REPEAT16(NPE_FMA512)
  }
  __m512 sum = _mm512_setzero_ps();
#define NPE_SUM512(i) sum = _mm512_add_ps(sum, c##i);
  NPE_REPEAT16(NPE_SUM512)
  return lane_sum(sum);
}

__attribute__((target("avx512f,avx512bf16"))) float dot_bf16(int64_t n) {
  NPE_REPEAT16(NPE_DECLARE)
  const __m512bh ones = (__m512bh)_mm512_set1_epi16(0x3f80);  // bfloat16 1.0
  for (int64_t i = 0; i < n; ++i) {
#define NPE_DOT(i) c##i = _mm512_dpbf16_ps(c##i, ones, ones);
    NPE_REPEAT16(NPE_DOT)
  }
  __m512 sum = _mm512_setzero_ps();
  NPE_REPEAT16(NPE_SUM512)
  return lane_sum(sum);
}

__attribute__((target("avx2,fma"))) float fma_avx2(int64_t n) {
#define NPE_DECLARE256(i) __m256 c##i = _mm256_set1_ps(g_start + float(i));
  NPE_REPEAT16(NPE_DECLARE256)
  const __m256 a = _mm256_set1_ps(1.0001f), b = _mm256_set1_ps(0.9999f);
  for (int64_t i = 0; i < n; ++i) {
#define NPE_FMA256(i) c##i = _mm256_fmadd_ps(a, b, c##i);
    NPE_REPEAT16(NPE_FMA256)
  }
  __m256 sum = _mm256_setzero_ps();
#define NPE_SUM256(i) sum = _mm256_add_ps(sum, c##i);
  NPE_REPEAT16(NPE_SUM256)
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  return total;
}

#endif

double tile_rate(torch::ScalarType dtype, int64_t rows, double seconds) {
  const auto options = torch::TensorOptions().dtype(dtype);
  const auto input = torch::randn({rows, 128}).to(dtype);
  const auto weight = torch::randn({128, 128}).to(dtype);
  const auto bias = torch::randn({128}).to(dtype);
  const auto out = torch::empty({rows, 128}, options);
  TileMatmulEpilogue epilogue;
  epilogue.bias = &bias;
  epilogue.relu = true;
  const double flops_per_product = 2.0 * double(rows) * 128 * 128;
  return best_rate(seconds, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) tile_matmul(out, input, weight, epilogue);
    return flops_per_product * double(n);
  });
}

}  // namespace

CpuPeak measure_cpu_peak(double seconds) {
  CpuPeak peak;
#ifdef NPE_X86_PROBES
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    peak.fp32_instruction = "AVX-512 FMA";
    peak.fp32_instruction_gflops = best_rate(seconds, [](int64_t n) {
      g_sink = fma_avx512(n);
      return 16.0 * 16 * 2 * double(n);  // 16 accumulators x 16 lanes x (multiply, add)
    });
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    peak.fp32_instruction = "AVX2 FMA";
    peak.fp32_instruction_gflops = best_rate(seconds, [](int64_t n) {
      g_sink = fma_avx2(n);
      return 16.0 * 8 * 2 * double(n);
    });
  }
  if (__builtin_cpu_supports("avx512bf16")) {
    peak.bf16_instruction_gflops = best_rate(seconds, [](int64_t n) {
      g_sink = dot_bf16(n);
      return 16.0 * 32 * 2 * double(n);  // 16 accumulators x 32 bf16 pairs x (multiply, add)
    });
  }
#endif
  // The kernel's tiles: 2,048 pairs in float32, 4,096 in bfloat16 (the same bytes).
  peak.fp32_tile_gflops = tile_rate(torch::kFloat32, 2048, seconds);
  if (bf16_unavailable_reason().empty()) {
    peak.bf16_tile_gflops = tile_rate(torch::kBFloat16, 4096, seconds);
  }
  peak.tile_uses_onednn = tile_matmul_uses_onednn();
  return peak;
}

}  // namespace npe::cli
