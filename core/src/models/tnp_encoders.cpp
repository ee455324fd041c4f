#include "models/tnp_encoders.h"

#include <string>

#include <torch/torch.h>

#include "models/tokens.h"

namespace npe {

TnpdEncoder::TnpdEncoder(torch::nn::Module& owner, const ModelConfig& c) {
  const auto& transformer = c.options<TransformerOptions>();
  m_embed =
      owner.register_module("embed", token_embedder(c.dim_x + c.dim_y + 1, transformer.dim_model));
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    m_layers.push_back(owner.register_module(
        "layer" + std::to_string(l),
        AttentionBlock(transformer.dim_model, transformer.num_heads, transformer.head_dim)));
  }
}

torch::Tensor TnpdEncoder::encode(const Task& task) {
  auto [zc, zt] = input_output_tokens(m_embed, task);
  const auto nc = zc.size(1);
  auto z = torch::cat({zc, zt}, 1);
  for (auto& layer : m_layers) {
    z = layer->forward(z, z.narrow(1, 0, nc));
  }
  return z.narrow(1, nc, z.size(1) - nc);
}

TeTnpEncoder::TeTnpEncoder(torch::nn::Module& owner, const ModelConfig& c, bool target_locations)
    : m_dim_model(c.options<TransformerOptions>().dim_model),
      m_token_features(place_feature_route(c).token_features),
      m_context_frequencies(c.options<TeAttentionOptions>().context_frequencies) {
  const auto& sharing = c.options<LayerSharingOptions>();
  const auto& te = c.options<TeAttentionOptions>();
  const auto& transformer = c.options<TransformerOptions>();
  const auto dz = transformer.dim_model;
  m_embed = owner.register_module("embed", token_embedder(c.dim_y + m_token_features + 1, dz));
  const auto pairwise_dims = place_feature_route(c).pairwise_dims;
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    auto block = [&](bool update_locations) {
      return TeAttentionBlock(dz, transformer.num_heads, transformer.head_dim, pairwise_dims,
                              te.pairwise_width, te.distance_frequencies, update_locations,
                              te.context_frequencies);
    };
    // Unless the caller needs them, the target locations leave the last layer unused, so its
    // cross-attention skips their update, unless it is shared with the self-attention, which
    // needs it.
    const bool last = l + 1 == transformer.num_layers;
    auto cross = owner.register_module(
        "cross" + std::to_string(l),
        block(te.update_locations && (!last || target_locations || sharing.share_layer_weights)));
    m_cross.push_back(cross);
    m_self.push_back(
        sharing.share_layer_weights
            ? cross
            : owner.register_module("self" + std::to_string(l), block(te.update_locations)));
  }
}

TeTnpEncoder::Output TeTnpEncoder::encode(const Task& task, bool record_attention) {
  auto [zc, zt] = output_only_tokens(m_embed, task, m_dim_model, m_token_features);
  const auto located = coordinates_only(task, m_token_features);
  auto xc = located.xc;
  auto xt = located.xt;
  if (m_context_frequencies > 0) {
    auto spectrum = context_spectrum(located.xc, task.yc, m_context_frequencies);
    for (size_t l = 0; l < m_self.size(); ++l) {
      m_self[l]->set_context_spectrum(spectrum);
      m_cross[l]->set_context_spectrum(spectrum);
    }
  }
  Output out;
  for (size_t l = 0; l < m_self.size(); ++l) {
    auto self = m_self[l]->forward(zc, xc, zc, xc);
    zc = self.z;
    xc = self.x;
    const bool record = record_attention && l + 1 == m_self.size();
    auto cross = m_cross[l]->forward(zt, xt, zc, xc, record);
    zt = cross.z;
    xt = cross.x;
    if (record) out.last_attention = cross.weights;
  }
  out.zt = zt;
  out.xt = xt;
  return out;
}

}  // namespace npe
