#include "npe/runtime.h"

#include <thread>

#include <torch/torch.h>
#include <torch/version.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "npe/errors.h"

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
