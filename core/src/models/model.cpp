#include "npe/models/model.h"

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/models/model_registry.h"

namespace npe {

Prediction NeuralProcessImpl::predict(const Task& task) {
  validate_task(task);
  if (task.dim_x() != m_config.dim_x || task.dim_y() != m_config.dim_y) {
    throw InvalidInputError(model_info(m_config.kind).display_name +
                            " was built for D_x = " + std::to_string(m_config.dim_x) +
                            ", D_y = " + std::to_string(m_config.dim_y) +
                            " but the task has D_x = " + std::to_string(task.dim_x()) +
                            ", D_y = " + std::to_string(task.dim_y()));
  }
  if (m_config.input_scale != 1.0) {
    const auto s = m_config.input_scale;
    return forward_impl({task.xc * s, task.yc, task.xt * s, task.yt});
  }
  return forward_impl(task);
}

torch::Tensor NeuralProcessImpl::target_attention(const Task& task) {
  m_record_attention = true;
  m_last_attention = torch::Tensor();
  try {
    predict(task);
  } catch (...) {
    m_record_attention = false;
    throw;
  }
  m_record_attention = false;
  auto weights = m_last_attention;
  m_last_attention = torch::Tensor();
  return weights.defined() ? weights.sum(1) : weights;
}

}  // namespace npe
