#include "npe/models/auto_precision.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "first_line.h"
#include "models/kernels/pairwise_kernel_attention.h"
#include "npe/atomic_file.h"
#include "npe/errors.h"
#include "npe/runtime.h"

namespace npe {
namespace {

// One tile of the training workload for the fused TE attention kernel: 8 heads of 16, rho width
// 128 and 64 x 64 = 4,096 pairs, the tile size the kernel trains with. The whole kernel, not one
// product, is timed: on an Intel Xeon with AVX512-BF16 but no AMX, libtorch's bfloat16 product
// ran 2.7x faster than its float32 one (OpenBLAS), yet the reference training step was 12 %
// slower in bfloat16 than in float32 once both ran on oneDNN (2026-11-23).
class AttentionKernelProbe {
 public:
  AttentionKernelProbe() {
    // A generator of its own: reseeding the global one would change what a caller draws next.
    auto generator = at::detail::createCPUGenerator(0);
    auto randn = [&generator](std::vector<int64_t> shape) {
      return torch::randn(shape, generator);
    };
    constexpr int64_t heads = 8, head_dim = 16, queries = 64, keys = 64, width = 128;
    m_q = randn({1, queries, heads, head_dim});
    m_k = randn({1, keys, heads, head_dim});
    m_v = randn({1, keys, heads, head_dim});
    m_xq = randn({1, queries, 1});
    m_xk = randn({1, keys, 1});
    auto parameter = [&randn](std::vector<int64_t> shape) {
      return (0.1 * randn(std::move(shape))).requires_grad_();
    };
    m_w1 = parameter({width, heads + 1});
    m_b1 = parameter({width});
    m_w2 = parameter({width, width});
    m_b2 = parameter({width});
    m_w3 = parameter({heads, width});
    m_b3 = parameter({heads});
  }

  // One forward and backward pass, in seconds.
  double seconds(Precision precision) const {
    const auto start = std::chrono::steady_clock::now();
    const auto out = pairwise_kernel_attention(m_q, m_k, m_v, m_xq, m_xk, m_w1, m_b1, m_w2, m_b2,
                                               m_w3, m_b3, precision);
    out[0].sum().backward();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  torch::Tensor m_q, m_k, m_v, m_xq, m_xk, m_w1, m_b1, m_w2, m_b2, m_w3, m_b3;
};

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

std::string format_speedup(double speedup) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", speedup);
  return text;
}

// The cache file's entry for this CPU and libtorch: another libtorch may build other kernels.
bool same_machine(const nlohmann::json& entry) {
  return entry.value("cpu", std::string()) == bf16_cpu_key(this_cpu()) &&
         entry.value("libtorch", std::string()) == libtorch_version();
}

nlohmann::json read_cache(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  // A damaged or foreign file is as good as none: it is timed again and rewritten.
  auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("timings") || !json["timings"].is_array()) {
    return nlohmann::json::object();
  }
  return json;
}

// The kept timing for this machine, or nullptr.
const nlohmann::json* cached_timing(const nlohmann::json& cache) {
  if (!cache.contains("timings")) return nullptr;
  for (const auto& entry : cache["timings"]) {
    if (entry.is_object() && same_machine(entry) && entry.contains("speedup") &&
        entry["speedup"].is_number()) {
      const double speedup = entry["speedup"].get<double>();
      if (std::isfinite(speedup) && speedup > 0.0) return &entry;
    }
  }
  return nullptr;
}

// Keeps a quiet timing; returns why it could not be kept, or "".
std::string keep_timing(const std::filesystem::path& file, nlohmann::json cache,
                        const Bf16Timing& timing) {
  nlohmann::json timings = nlohmann::json::array();
  if (cache.contains("timings")) {
    for (const auto& entry : cache["timings"]) {
      if (!(entry.is_object() && same_machine(entry))) timings.push_back(entry);
    }
  }
  timings.push_back({{"cpu", bf16_cpu_key(this_cpu())},
                     {"libtorch", libtorch_version()},
                     {"speedup", timing.speedup},
                     {"other_cores", timing.other_cores},
                     {"threads", torch::get_num_threads()},
                     {"date", today_utc()}});
  cache = {{"about",
            "npe: how many times faster the fused TE attention kernel ran in bf16 than "
            "in fp32, timed on a quiet machine; --precision auto reads it"},
           {"timings", timings}};
  try {
    std::error_code ignored;
    std::filesystem::create_directories(file.parent_path(), ignored);
    write_file_atomically(file, cache.dump(2) + "\n");
    return {};
  } catch (const Error& e) {
    return first_line(e.what());
  }
}

std::string cpu_instructions_text(const CpuInfo& cpu) {
  if (cpu.has("amx_bf16")) return "AMX-BF16";
  if (cpu.has("avx512_bf16")) {
    return cpu.vendor == "AuthenticAMD" ? "AVX512-BF16 on an AMD CPU"
                                        : "AVX512-BF16 without AMX, slower in bf16 where timed";
  }
  return "no bf16 instructions";
}

Precision choose(double speedup) {
  return speedup > kAutoBf16Speedup ? Precision::bf16 : Precision::fp32;
}

}  // namespace

std::string bf16_cpu_key(const CpuInfo& cpu) {
  std::string key = cpu.model + " [";
  for (const char* flag : {"avx512f", "avx512_bf16", "amx_bf16"}) {
    if (cpu.has(flag)) key += (key.back() == '[' ? "" : " ") + std::string(flag);
  }
  return key + "]";
}

bool cpu_prefers_bf16(const CpuInfo& cpu) {
  return cpu.has("amx_bf16") || (cpu.has("avx512_bf16") && cpu.vendor == "AuthenticAMD");
}

std::filesystem::path bf16_speedup_cache_file() {
  const auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? std::filesystem::path(value)
                                              : std::filesystem::path();
  };
  const char* const name = "bf16-speedup.json";
  if (auto dir = set("NPE_CACHE_DIR"); !dir.empty()) return dir / name;
  if (auto dir = set("XDG_CACHE_HOME"); !dir.empty()) return dir / "npe" / name;
  if (auto dir = set("HOME"); !dir.empty()) return dir / ".cache" / "npe" / name;
  return {};
}

const std::string& bf16_unavailable_reason() {
  static const std::string reason = [] {
    torch::AutoGradMode grad(true);
    try {
      AttentionKernelProbe().seconds(Precision::bf16);
      return std::string();
    } catch (const std::exception& e) {  // c10::Error from oneDNN: "could not create a primitive"
      return std::string("this CPU cannot run the bfloat16 products (") + first_line(e.what()) +
             ")";
    }
  }();
  return reason;
}

Bf16Timing time_bf16_speedup() {
  Bf16Timing timing;
  if (!bf16_unavailable_reason().empty()) return timing;
  torch::AutoGradMode grad(true);
  // The precisions take turns, best of several each, so that a burst of load from elsewhere
  // slows both alike instead of deciding the ratio. The first pass of each builds its
  // primitives: not timed. A third of a second at least, so that the other programs' share of the
  // clock ticks (10 ms each) is a figure, not noise.
  const AttentionKernelProbe probe;
  probe.seconds(Precision::fp32);
  probe.seconds(Precision::bf16);
  const OtherCpuUse others;
  const auto start = std::chrono::steady_clock::now();
  double fp32 = 1e30, bf16 = 1e30;
  for (int round = 0; round < 200; ++round) {
    fp32 = std::min(fp32, probe.seconds(Precision::fp32));
    bf16 = std::min(bf16, probe.seconds(Precision::bf16));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (round >= 6 && elapsed >= 0.3) break;
  }
  timing.speedup = fp32 / bf16;
  timing.other_cores = others.cores();
  return timing;
}

AutoPrecision decide_auto_precision(const std::filesystem::path& cache_file) {
  AutoPrecision chosen;
  if (!bf16_unavailable_reason().empty()) {
    chosen.reason = "this CPU has no bf16 products";
    return chosen;
  }
  const auto cache = cache_file.empty() ? nlohmann::json::object() : read_cache(cache_file);
  if (const auto* kept = cached_timing(cache)) {
    chosen.basis = AutoPrecision::Basis::cached;
    chosen.speedup = (*kept)["speedup"].get<double>();
    chosen.precision = choose(chosen.speedup);
    chosen.reason = "the TE kernel's bf16 speedup is " + format_speedup(chosen.speedup) +
                    " on this CPU (timed " + kept->value("date", std::string("")) +
                    " on a quiet machine, kept in " + cache_file.string() + ")";
    return chosen;
  }
  const auto timing = time_bf16_speedup();
  chosen.speedup = timing.speedup;
  chosen.other_cores = timing.other_cores;
  char busy[48];
  std::snprintf(busy, sizeof busy, "%.1f", timing.other_cores);
  if (timing.other_cores > kQuietOtherCores) {
    chosen.basis = AutoPrecision::Basis::cpu;
    chosen.precision = cpu_prefers_bf16(this_cpu()) ? Precision::bf16 : Precision::fp32;
    chosen.reason = std::string("other programs kept ") + busy +
                    " cores busy while the TE kernel was timed (bf16 speedup " +
                    format_speedup(timing.speedup) +
                    "), so the CPU decided: " + cpu_instructions_text(this_cpu());
    return chosen;
  }
  chosen.basis = AutoPrecision::Basis::measured;
  chosen.precision = choose(timing.speedup);
  chosen.reason = "the TE kernel's bf16 speedup is " + format_speedup(timing.speedup) + " here";
  if (timing.other_cores < 0) {
    chosen.reason += " (how busy the machine was is not known: not kept)";
  } else if (cache_file.empty()) {
    chosen.reason += " (timed now on a quiet machine)";
  } else if (const auto why = keep_timing(cache_file, cache, timing); !why.empty()) {
    chosen.reason += " (timed now on a quiet machine; not kept: " + why + ")";
  } else {
    chosen.reason += " (timed now on a quiet machine, kept in " + cache_file.string() + ")";
  }
  return chosen;
}

const AutoPrecision& auto_precision() {
  static const AutoPrecision chosen = decide_auto_precision(bf16_speedup_cache_file());
  return chosen;
}

}  // namespace npe
