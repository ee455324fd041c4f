#pragma once
// The GP tasks' oracle: each task predicted by the exact posterior under the kernel and noise
// that generated it (npe/ground/gp_posterior.h), carried by the task batches it knows.

#include <optional>
#include <string>
#include <vector>

#include "npe/data/task_source.h"
#include "npe/ground/gp_posterior.h"

namespace npe {

/// The GP oracle as carried by GP-generated task batches: one kernel per task, shared noise.
class GpOracle final : public TaskOracle {
 public:
  GpOracle(std::vector<KernelSpec> kernels, double noise_std)
      : m_kernels(std::move(kernels)), m_noise_std(noise_std) {}
  Prediction predict(const Task& task) const override;
  std::optional<JointGaussian> predict_joint(const Task& task) const override;
  /// Each task's kernel family (kernel_name).
  std::vector<std::string> task_kinds() const override;
  /// Each task's ell of paper_kernel: the period of a periodic kernel, else the lengthscale;
  /// empty where a kernel has one lengthscale per dimension.
  std::vector<double> task_scales() const override;
  const std::vector<KernelSpec>& kernels() const { return m_kernels; }
  double noise_std() const { return m_noise_std; }

 private:
  std::vector<KernelSpec> m_kernels;
  double m_noise_std;
};

}  // namespace npe
