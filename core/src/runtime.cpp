#include "npe/runtime.h"

#include <cstdio>
#include <thread>

#include <torch/torch.h>
#include <torch/version.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "npe/errors.h"
#include "npe/guard_page_allocator.h"

namespace npe {

int configure_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  return at::get_num_threads();
}

void configure_allocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  // A hunt for memory errors asks for it (guard_page_allocator.h); a wrong value is said and
  // ignored, never the end of the program.
  try {
    if (const auto settings = guard_page_settings_from_env()) {
      install_guard_page_allocator(*settings);
      std::fprintf(stderr, "NPE_GUARD_PAGES: %s (slow; for hunting memory errors)\n",
                   describe_guard_page_allocator().c_str());
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "%s; ignored\n", e.what());
  }
}

torch::Device parse_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "auto") return torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw ConfigError(
          "--device cuda was requested but no CUDA device is available "
          "(this libtorch " +
          libtorch_version() + " sees none)");
    }
    return torch::kCUDA;
  }
  throw ConfigError("unknown device '" + name + "' (known: cpu, cuda, auto)");
}

std::string describe_device(torch::Device device) {
  if (device.is_cuda()) return "CUDA:" + std::to_string(device.has_index() ? device.index() : 0);
  const int threads = at::get_num_threads();
  return "CPU (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
}

std::string libtorch_version() {
  return TORCH_VERSION;
}

}  // namespace npe
