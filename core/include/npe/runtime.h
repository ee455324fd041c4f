#pragma once
// Process-wide run-time settings: threads, allocator behaviour, device choice.

#include <string>

#include <torch/types.h>

namespace npe {

/// The most intra-op threads a program accepts: more than any machine's cores (thread start-up
/// alone grows with the count: 16 s for a tiny evaluation at 1,024 threads on 2 cores, and
/// 100,000 ran for minutes); the options check it.
constexpr int kMaxThreads = 1024;

/// Sets libtorch's intra-op thread count; threads <= 0 means all cores. Debian's libtorch
/// starts with one thread, so every program calls this. Returns the count in effect.
int configure_threads(int threads);

/// Stops glibc from returning large temporaries to the kernel after every call (mmap/munmap
/// churn measured to double the TE-TNP step time). No effect on other C libraries. Installs the
/// guard-page allocator when the environment sets NPE_GUARD_PAGES (guard_page_allocator.h).
void configure_allocator();

/// "cpu", "cuda" or "auto" (CUDA when available). Throws ConfigError for "cuda" without a GPU
/// or an unknown name.
torch::Device parse_device(const std::string& name);

/// Human-readable description, e.g. "CPU (2 threads)" or "CUDA:0".
std::string describe_device(torch::Device device);

/// libtorch version string, e.g. "1.13.1".
std::string libtorch_version();

}  // namespace npe
