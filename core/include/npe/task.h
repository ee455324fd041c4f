#pragma once
// A batch of regression tasks in the neural-process sense: context set and target set.

#include <torch/types.h>

namespace npe {

/// A batch of B tasks. Shapes: xc [B,Nc,Dx], yc [B,Nc,Dy], xt [B,Nt,Dx], yt [B,Nt,Dy].
/// yt is undefined when target outputs are unknown (prediction only). Nc may be 0.
struct Task {
  torch::Tensor xc;
  torch::Tensor yc;
  torch::Tensor xt;
  torch::Tensor yt;

  int64_t batch_size() const { return xc.size(0); }
  int64_t num_context() const { return xc.size(1); }
  int64_t num_targets() const { return xt.size(1); }
  int64_t dim_x() const { return xc.size(2); }
  int64_t dim_y() const { return yc.size(2); }
  bool has_target_outputs() const { return yt.defined(); }

  /// Same task on another device / dtype.
  Task to(torch::Device device, torch::ScalarType dtype = torch::kFloat32) const;
  /// All inputs (context and target) translated by the same scalar in every input dimension.
  Task translated(double shift) const;
  /// All inputs translated by the vector tau [Dx].
  Task translated(const torch::Tensor& tau) const;
};

/// Checks ranks, matching sizes and finiteness. Throws InvalidInputError with the offending
/// shapes. With require_target_outputs, yt must be present and well formed.
void validate_task(const Task& task, bool require_target_outputs = false);

}  // namespace npe
