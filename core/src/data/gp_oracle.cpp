#include "npe/data/gp_oracle.h"

namespace npe {

Prediction GpOracle::predict(const Task& task) const {
  return gp_oracle_predict(task, m_kernels, m_noise_std);
}

std::optional<JointGaussian> GpOracle::predict_joint(const Task& task) const {
  return gp_joint_predictive(task, m_kernels, std::vector<double>(m_kernels.size(), m_noise_std));
}

std::vector<std::string> GpOracle::task_kinds() const {
  std::vector<std::string> kinds;
  kinds.reserve(m_kernels.size());
  for (const auto& kernel : m_kernels) kinds.push_back(kernel_name(kernel.kind));
  return kinds;
}

std::vector<double> GpOracle::task_scales() const {
  std::vector<double> scales;
  scales.reserve(m_kernels.size());
  for (const auto& kernel : m_kernels) {
    if (!kernel.ard_lengthscales.empty()) return {};
    scales.push_back(kernel.kind == KernelKind::Periodic ? kernel.period : kernel.lengthscale);
  }
  return scales;
}

}  // namespace npe
