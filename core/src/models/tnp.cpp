#include "models/tnp.h"

#include <torch/torch.h>

#include "models/tokens.h"

namespace npe {

TnpImpl::TnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto dz = c.dim_model;
  m_embed = register_module("embed", token_embedder(c.dim_x + c.dim_y + 1, dz));
  for (int64_t l = 0; l < c.num_layers; ++l) {
    m_self.push_back(
        register_module("self" + std::to_string(l), AttentionBlock(dz, c.num_heads, c.head_dim)));
    m_cross.push_back(
        register_module("cross" + std::to_string(l), AttentionBlock(dz, c.num_heads, c.head_dim)));
  }
  m_head = register_module("head", GaussianHead(dz, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction TnpImpl::forward_impl(const Task& task) {
  auto [zc, zt] = input_output_tokens(m_embed, task);
  for (size_t l = 0; l < m_self.size(); ++l) {
    zc = m_self[l]->forward(zc, zc);
    const bool last = l + 1 == m_self.size();
    zt = m_cross[l]->forward(zt, zc, last && m_record_attention ? &m_last_attention : nullptr);
  }
  return m_head->forward(zt);
}

TeTnpImpl::TeTnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  m_encoder = std::make_unique<TeTnpEncoder>(*this, c, /*target_locations=*/false);
  const auto dz = c.dim_model;
  m_head = register_module("head", GaussianHead(dz, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction TeTnpImpl::forward_impl(const Task& task) {
  auto encoded = m_encoder->encode(task, m_record_attention);
  if (m_record_attention) m_last_attention = encoded.last_attention;
  return m_head->forward(encoded.zt);
}

}  // namespace npe
