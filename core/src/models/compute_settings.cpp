#include "npe/models/compute_settings.h"

#include <dlfcn.h>
#include <algorithm>
#include <atomic>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "npe/errors.h"
#include "npe/models/auto_precision.h"
#include "npe/process_memory.h"

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
  if (name == "auto") return auto_precision().precision;
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

}  // namespace npe
