#pragma once
// Interface of anything that produces batches of tasks for training and evaluation.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/kernels.h"
#include "npe/task.h"

namespace npe {

/// A batch of tasks plus what is known about how it was generated (empty when unknown).
struct TaskBatch {
  Task task;
  /// For GP-generated tasks: the kernel of each task, and the observation noise.
  std::vector<KernelSpec> kernels;
  double noise_std = 0.0;
  bool has_generating_gp() const { return !kernels.empty(); }
};

/// Deterministic task source: sample(batch, seed, shift) always returns the same tasks for the
/// same arguments, and tasks at shift s are the tasks at shift 0 translated by s.
class TaskSource {
 public:
  virtual ~TaskSource() = default;
  /// Short name as on the command line ("gp1d").
  virtual std::string name() const = 0;
  virtual int64_t dim_x() const = 0;
  virtual int64_t dim_y() const = 0;
  /// Draws batch_size tasks on the CPU in float32.
  virtual TaskBatch sample(int64_t batch_size, uint64_t seed, double shift = 0.0) const = 0;
  /// Configuration, stored in checkpoints.
  virtual nlohmann::json to_json() const = 0;
};

}  // namespace npe
