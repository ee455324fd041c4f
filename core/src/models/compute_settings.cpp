#include "npe/models/compute_settings.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {
namespace {

std::atomic<Precision> g_precision{Precision::fp32};
std::atomic<AttentionImplementation> g_attention{AttentionImplementation::fused};

// Best of a few runs of the pairwise MLP's hidden-layer product on one tile, in seconds.
double time_tile_product(torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  const auto options = torch::TensorOptions().dtype(dtype);
  auto x = torch::randn({2048, 128}).to(options);
  auto w = torch::randn({128, 128}).to(options);
  auto out = torch::empty({2048, 128}, options);
  double best = 1e30;
  for (int i = 0; i < 6; ++i) {
    const auto start = std::chrono::steady_clock::now();
    torch::mm_out(out, x, w);
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  if (name == "auto") return measure_bf16_speedup() > 1.5 ? Precision::bf16 : Precision::fp32;
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

Bf16Autocast::Bf16Autocast(bool enabled, bool cuda) : m_enabled(enabled), m_cuda(cuda) {
  if (!m_enabled) return;
  namespace ac = at::autocast;
  m_was_enabled = m_cuda ? ac::is_enabled() : ac::is_cpu_enabled();
  m_previous_dtype =
      static_cast<int>(m_cuda ? ac::get_autocast_gpu_dtype() : ac::get_autocast_cpu_dtype());
  if (m_cuda) {
    ac::set_autocast_gpu_dtype(at::kBFloat16);
    ac::set_enabled(true);
  } else {
    ac::set_autocast_cpu_dtype(at::kBFloat16);
    ac::set_cpu_enabled(true);
  }
  ac::increment_nesting();
}

Bf16Autocast::~Bf16Autocast() {
  if (!m_enabled) return;
  namespace ac = at::autocast;
  // The cast weights are cached while any autocast scope is open; the outermost one drops them.
  if (ac::decrement_nesting() == 0) ac::clear_cache();
  const auto dtype = static_cast<at::ScalarType>(m_previous_dtype);
  if (m_cuda) {
    ac::set_enabled(m_was_enabled);
    ac::set_autocast_gpu_dtype(dtype);
  } else {
    ac::set_cpu_enabled(m_was_enabled);
    ac::set_autocast_cpu_dtype(dtype);
  }
}

AutocastOff::AutocastOff()
    : m_cpu(at::autocast::is_cpu_enabled()), m_cuda(at::autocast::is_enabled()) {
  at::autocast::set_cpu_enabled(false);
  at::autocast::set_enabled(false);
}

AutocastOff::~AutocastOff() {
  at::autocast::set_cpu_enabled(m_cpu);
  at::autocast::set_enabled(m_cuda);
}

double measure_bf16_speedup() {
  static std::once_flag once;
  static double speedup = 0.0;
  std::call_once(once, [] {
    speedup = time_tile_product(torch::kFloat32) / time_tile_product(torch::kBFloat16);
  });
  return speedup;
}

}  // namespace npe
