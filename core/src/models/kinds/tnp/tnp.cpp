#include "models/kinds/tnp/tnp.h"

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/parameter_terms.h"
#include "models/tokens.h"

namespace npe {

TnpImpl::TnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto& transformer = c.options<TransformerOptions>();
  const auto dz = transformer.dim_model;
  m_embed = register_module("embed", token_embedder(c.dim_x + c.dim_y + 1, dz));
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    m_self.push_back(
        register_module("self" + std::to_string(l),
                        AttentionBlock(dz, transformer.num_heads, transformer.head_dim)));
    m_cross.push_back(
        register_module("cross" + std::to_string(l),
                        AttentionBlock(dz, transformer.num_heads, transformer.head_dim)));
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
  const auto dz = c.options<TransformerOptions>().dim_model;
  m_head = register_module("head", GaussianHead(dz, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction TeTnpImpl::forward_impl(const Task& task) {
  auto encoded = m_encoder->encode(task, m_record_attention);
  if (m_record_attention) m_last_attention = encoded.last_attention;
  return m_head->forward(encoded.zt);
}

ModelSpec tnp_spec() {
  ModelSpec spec;
  spec.info = {
      "tnp",
      "TNP",
      "Transformer NP as in the TE-TNP paper: per layer, context self-attention and target "
      "cross-attention; x enters directly.",
      false,
      true,
      false,
      true,
      2};
  spec.make_options = options_of<TnpOptions>;
  spec.make = make_model_of<TnpImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    const auto& t = c.options<TransformerOptions>();
    return token_embedder(double(c.dim_x + c.dim_y + 1), double(t.dim_model)) +
           2.0 * double(t.num_layers) * attention_block(c) + head(c);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const auto& transformer = c.options<TransformerOptions>();
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dx = double(c.dim_x), dy = double(c.dim_y),
                 layers = double(transformer.num_layers);
    return embedder(c, nc + nt, dx + dy + 1) + layers * (block(c, nc, nc) + block(c, nt, nc)) +
           head(c, nt, double(transformer.dim_model));
  };
  return spec;
}

ModelSpec tetnp_spec() {
  ModelSpec spec;
  spec.info = {
      "tetnp", "TE-TNP", "Translation-equivariant TNP: attention sees inputs only through x - x'.",
      true,    true,     false,
      true,    2};
  spec.make_options = options_of<TeTnpOptions>;
  spec.make = make_model_of<TeTnpImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    return te_tnp_encoder(c, /*target_locations=*/false) + head(c);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const auto& transformer = c.options<TransformerOptions>();
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double layers = double(transformer.num_layers);
    // The last cross-attention skips the unused target location update unless it is shared.
    const bool u = c.options<TeAttentionOptions>().update_locations;
    return te_tokens(c, nc, nt) + context_spectrum(c, nc) + layers * te_block(c, nc, nc, u) +
           (layers - 1) * te_block(c, nt, nc, u) +
           te_block(c, nt, nc, u && c.options<LayerSharingOptions>().share_layer_weights) +
           head(c, nt, double(transformer.dim_model));
  };
  return spec;
}

}  // namespace npe
