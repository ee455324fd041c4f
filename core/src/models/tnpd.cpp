#include "models/tnpd.h"

#include <torch/torch.h>

namespace npe {

TnpdImpl::TnpdImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  m_encoder = std::make_unique<TnpdEncoder>(*this, c);
  m_head = register_module(
      "head", GaussianHead(c.dim_model, c.dim_model, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction TnpdImpl::forward_impl(const Task& task) {
  return m_head->forward(m_encoder->encode(task));
}

}  // namespace npe
