#pragma once
// A CPU allocator for hunting writes out of bounds in code no sanitizer sees (libtorch's own
// kernels in Debian's binary, oneDNN's JIT code, OpenBLAS): every tensor's storage gets pages of
// its own, its last byte against a page the process may not touch, so that a kernel writing (or
// reading) past a tensor's end faults at that instruction, with the culprit on the stack,
// instead of corrupting whatever glibc placed next to it. Slow (a mapping per tensor) and for
// hunting only: programs install it when the environment sets NPE_GUARD_PAGES
// (configure_allocator); tensors made before keep their own allocator.
//
//   NPE_GUARD_PAGES=end     the storage ends at the guard page (overruns fault)
//   NPE_GUARD_PAGES=start   the storage starts at it (underruns fault)
//
// The storage is aligned to NPE_GUARD_PAGES_ALIGNMENT bytes (default 4: a float32 tensor ends
// exactly at the guard; 2 makes bfloat16 tensors exact too, at the cost of misaligned floats).

#include <cstddef>
#include <optional>
#include <string>

namespace npe {

enum class GuardedEnd { kEnd, kStart };

struct GuardPageSettings {
  GuardedEnd guarded = GuardedEnd::kEnd;
  size_t alignment = 4;  // a power of two, at most the page size
};

/// The settings the environment asks for (NPE_GUARD_PAGES, NPE_GUARD_PAGES_ALIGNMENT), or none.
/// Throws ConfigError for a value it does not know.
std::optional<GuardPageSettings> guard_page_settings_from_env();

/// Makes libtorch's CPU allocator the guard-page one, from now on, for the whole process.
void install_guard_page_allocator(const GuardPageSettings& settings);

/// Whether the guard-page allocator is libtorch's CPU allocator now, and how it is set, e.g.
/// "guard pages after every tensor (aligned to 4 bytes)"; empty when it is not.
std::string describe_guard_page_allocator();

}  // namespace npe
