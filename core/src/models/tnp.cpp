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
  const auto dz = c.dim_model;
  m_embed = register_module("embed", token_embedder(c.dim_y + 1, dz));
  for (int64_t l = 0; l < c.num_layers; ++l) {
    auto block = [&](bool update_locations) {
      return TeAttentionBlock(dz, c.num_heads, c.head_dim, c.dim_x, c.pairwise_width,
                              update_locations);
    };
    // The target locations leave the last layer unused, so its cross-attention skips their
    // update, unless it is shared with the self-attention, which needs it.
    const bool last = l + 1 == c.num_layers;
    auto cross = register_module("cross" + std::to_string(l),
                                 block(c.update_locations && (!last || c.share_layer_weights)));
    m_cross.push_back(cross);
    m_self.push_back(c.share_layer_weights
                         ? cross
                         : register_module("self" + std::to_string(l), block(c.update_locations)));
  }
  m_head = register_module("head", GaussianHead(dz, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction TeTnpImpl::forward_impl(const Task& task) {
  auto [zc, zt] = output_only_tokens(m_embed, task, config().dim_model);
  auto xc = task.xc;
  auto xt = task.xt;
  for (size_t l = 0; l < m_self.size(); ++l) {
    auto self = m_self[l]->forward(zc, xc, zc, xc);
    zc = self.z;
    xc = self.x;
    const bool record = m_record_attention && l + 1 == m_self.size();
    auto cross = m_cross[l]->forward(zt, xt, zc, xc, record);
    zt = cross.z;
    xt = cross.x;
    if (record) m_last_attention = cross.weights;
  }
  return m_head->forward(zt);
}

}  // namespace npe
