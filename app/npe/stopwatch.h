#pragma once
// Wall time for the benchmarks' timers: one clock for every command.

#include <chrono>

namespace npe::cli {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace npe::cli
