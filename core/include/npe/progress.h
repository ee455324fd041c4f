#pragma once
// Qt-free progress reporting for long-running core work (training, evaluation, sweeps).

#include <cstdint>
#include <functional>
#include <string>

namespace npe {

/// A progress report: `done` of `total` units of work.
struct Progress {
  int64_t done = 0;
  int64_t total = 0;
  std::string message;
};

/// Called with progress; returning false asks the work to stop as soon as possible.
using ProgressCallback = std::function<bool(const Progress&)>;

}  // namespace npe
