#include "models/cnp.h"

#include <torch/torch.h>

namespace npe {

CnpImpl::CnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto dz = c.dim_model;
  m_encoder = register_module("encoder", Mlp(c.dim_x + c.dim_y, std::vector<int64_t>(5, dz), dz));
  m_head = register_module(
      "head", GaussianHead(dz + c.dim_x, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction CnpImpl::forward_impl(const Task& task) {
  const auto b = task.batch_size(), nt = task.num_targets();
  torch::Tensor r;
  if (task.num_context() == 0) {
    r = torch::zeros({b, config().dim_model}, task.xt.options());
  } else {
    r = m_encoder->forward(torch::cat({task.xc, task.yc}, -1)).mean(1);
  }
  auto rt = r.unsqueeze(1).expand({b, nt, r.size(-1)});
  return m_head->forward(torch::cat({rt, task.xt}, -1));
}

}  // namespace npe
