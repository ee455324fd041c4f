#include "npe/models/compute_settings.h"

#include <dlfcn.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "first_line.h"
#include "npe/errors.h"
#include "npe/process_memory.h"
#include "pairwise_kernel_attention.h"

namespace npe {
namespace {

std::atomic<Precision> g_precision{Precision::fp32};
std::atomic<AttentionImplementation> g_attention{AttentionImplementation::automatic};
std::atomic<int64_t> g_block_bytes{0};

constexpr int64_t kMiB = int64_t{1} << 20;

// Free memory of the current CUDA device, asked of the CUDA runtime that a CUDA build of
// libtorch has loaded (looked up by name, so that core builds and runs without CUDA); 0 where
// there is none or it does not answer.
int64_t free_cuda_memory() {
  using MemGetInfo = int (*)(size_t*, size_t*);
  static const auto mem_get_info =
      reinterpret_cast<MemGetInfo>(dlsym(RTLD_DEFAULT, "cudaMemGetInfo"));
  size_t free = 0, total = 0;
  if (mem_get_info == nullptr || mem_get_info(&free, &total) != 0) return 0;
  return static_cast<int64_t>(free);
}

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

// Autocast state per device type. libtorch 2.4 replaced the per-device functions
// (is_cpu_enabled, get_autocast_gpu_dtype, ...) by ones that take the device type and deprecated
// the old ones, which later releases drop; 1.13 has only the old ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_enabled(c10::DeviceType device) {
  return at::autocast::is_autocast_enabled(device);
}
void set_autocast_enabled(c10::DeviceType device, bool enabled) {
  at::autocast::set_autocast_enabled(device, enabled);
}
at::ScalarType autocast_dtype(c10::DeviceType device) {
  return at::autocast::get_autocast_dtype(device);
}
void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(device, dtype);
}
#else
bool autocast_enabled(c10::DeviceType device) {
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled()
                                         : at::autocast::is_cpu_enabled();
}
void set_autocast_enabled(c10::DeviceType device, bool enabled) {
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_cpu_enabled(enabled);
  }
}
at::ScalarType autocast_dtype(c10::DeviceType device) {
  return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                         : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
}
#endif

}  // namespace

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") {
    // A clear refusal now rather than oneDNN's "could not create a primitive descriptor" at the
    // first step. (CUDA runs take bf16 from autocast; their hosts' CPUs have run it so far.)
    if (const auto& why = bf16_unavailable_reason(); !why.empty()) {
      throw ConfigError("precision bf16: " + why + "; use fp32");
    }
    return Precision::bf16;
  }
  if (name == "auto") {
    return measure_bf16_speedup() > kAutoBf16Speedup ? Precision::bf16 : Precision::fp32;
  }
  throw ConfigError("unknown precision '" + name + "' (known: fp32, bf16, auto)");
}

std::string precision_name(Precision precision) {
  return precision == Precision::bf16 ? "bf16" : "fp32";
}

void set_pairwise_precision(Precision precision) {
  g_precision.store(precision);
}

Precision pairwise_precision() {
  return g_precision.load();
}

void set_attention_implementation(AttentionImplementation implementation) {
  g_attention.store(implementation);
}

AttentionImplementation attention_implementation() {
  return g_attention.load();
}

AttentionImplementation parse_attention_implementation(const std::string& name) {
  if (name == "auto") return AttentionImplementation::automatic;
  if (name == "fused") return AttentionImplementation::fused;
  if (name == "plain") return AttentionImplementation::plain;
  if (name == "blocked") return AttentionImplementation::blocked;
  throw ConfigError("unknown TE attention '" + name + "' (known: auto, fused, plain, blocked)");
}

std::string attention_implementation_name(AttentionImplementation implementation) {
  switch (implementation) {
    case AttentionImplementation::automatic:
      return "auto";
    case AttentionImplementation::fused:
      return "fused";
    case AttentionImplementation::plain:
      return "plain";
    case AttentionImplementation::blocked:
      return "blocked";
  }
  return "auto";
}

void set_attention_block_bytes(int64_t bytes) {
  g_block_bytes.store(std::max<int64_t>(0, bytes));
}

int64_t attention_block_bytes(bool cuda) {
  if (const auto chosen = g_block_bytes.load(); chosen > 0) return chosen;
  // Large enough that a block's products run at full speed, small enough that what the rest of
  // a training step holds (the blocks' outputs, the other layers, the optimiser) still fits.
  const int64_t available = cuda ? free_cuda_memory() / 8 : available_system_memory() / 16;
  if (available <= 0) return 1024 * kMiB;
  return std::clamp<int64_t>(available, 64 * kMiB, 2048 * kMiB);
}

Bf16Autocast::Bf16Autocast(bool enabled, bool cuda) : m_enabled(enabled), m_cuda(cuda) {
  if (!m_enabled) return;
  const auto device = m_cuda ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  m_was_enabled = autocast_enabled(device);
  m_previous_dtype = static_cast<int>(autocast_dtype(device));
  set_autocast_dtype(device, at::kBFloat16);
  set_autocast_enabled(device, true);
  at::autocast::increment_nesting();
}

Bf16Autocast::~Bf16Autocast() {
  if (!m_enabled) return;
  // The cast weights are cached while any autocast scope is open; the outermost one drops them.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  const auto device = m_cuda ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  set_autocast_enabled(device, m_was_enabled);
  set_autocast_dtype(device, static_cast<at::ScalarType>(m_previous_dtype));
}

AutocastOff::AutocastOff()
    : m_cpu(autocast_enabled(c10::DeviceType::CPU)),
      m_cuda(autocast_enabled(c10::DeviceType::CUDA)) {
  set_autocast_enabled(c10::DeviceType::CPU, false);
  set_autocast_enabled(c10::DeviceType::CUDA, false);
}

AutocastOff::~AutocastOff() {
  set_autocast_enabled(c10::DeviceType::CPU, m_cpu);
  set_autocast_enabled(c10::DeviceType::CUDA, m_cuda);
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

double measure_bf16_speedup() {
  static std::once_flag once;
  static double speedup = 0.0;
  std::call_once(once, [] {
    if (!bf16_unavailable_reason().empty()) return;
    torch::AutoGradMode grad(true);
    // The precisions take turns, best of several each, so that a burst of load from elsewhere
    // (a virtual machine waking up, another process) slows both alike instead of deciding the
    // ratio; with one burst-sized block per precision, "auto" once chose fp32 on a CPU where
    // bf16 trains 1.7x faster. The first pass of each builds its primitives: not timed.
    const AttentionKernelProbe probe;
    probe.seconds(Precision::fp32);
    probe.seconds(Precision::bf16);
    constexpr int kRounds = 7;
    double fp32 = 1e30, bf16 = 1e30;
    for (int round = 0; round < kRounds; ++round) {
      fp32 = std::min(fp32, probe.seconds(Precision::fp32));
      bf16 = std::min(bf16, probe.seconds(Precision::bf16));
    }
    speedup = fp32 / bf16;
  });
  return speedup;
}

}  // namespace npe
