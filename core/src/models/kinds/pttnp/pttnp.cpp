#include "models/kinds/pttnp/pttnp.h"

#include <cmath>

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/parameter_terms.h"
#include "models/tokens.h"
#include "npe/errors.h"

namespace npe {

PtTnpImpl::PtTnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto& transformer = c.options<TransformerOptions>();
  const auto dz = transformer.dim_model;
  m_embed = register_module("embed", token_embedder(c.dim_x + c.dim_y + 1, dz));
  m_pseudo_tokens = register_parameter(
      "pseudo_tokens", torch::randn({c.options<PseudoTokenOptions>().num_pseudo_tokens, dz}));
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    const auto s = std::to_string(l);
    auto block = [&] { return AttentionBlock(dz, transformer.num_heads, transformer.head_dim); };
    m_pseudo_from_context.push_back(register_module("pseudo_from_context" + s, block()));
    // The last layer's context tokens would never be read: no context update there.
    if (l + 1 < transformer.num_layers) {
      m_context_from_pseudo.push_back(register_module("context_from_pseudo" + s, block()));
    }
    m_target_from_pseudo.push_back(register_module("target_from_pseudo" + s, block()));
  }
  m_head = register_module("head", GaussianHead(dz, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction PtTnpImpl::forward_impl(const Task& task) {
  const auto b = task.batch_size();
  auto [zc, zt] = input_output_tokens(m_embed, task);
  auto u = m_pseudo_tokens.unsqueeze(0).expand({b, -1, -1});
  for (size_t l = 0; l < m_pseudo_from_context.size(); ++l) {
    u = m_pseudo_from_context[l]->forward(u, zc);
    if (l < m_context_from_pseudo.size()) zc = m_context_from_pseudo[l]->forward(zc, u);
    zt = m_target_from_pseudo[l]->forward(zt, u);
  }
  return m_head->forward(zt);
}

TePtTnpImpl::TePtTnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto& te = c.options<TeAttentionOptions>();
  if (te.context_frequencies > 0) {
    // Its attention between pseudo-tokens and data would need the spectrum in every direction;
    // the experiments of issue 105 ran on TE-TNP.
    throw ConfigError("TE-PT-TNP does not take context_frequencies (TE-TNP and TE-TNP-ND do)");
  }
  const auto& transformer = c.options<TransformerOptions>();
  const auto dz = transformer.dim_model;
  const auto route = place_feature_route(c);
  m_embed = register_module("embed", token_embedder(c.dim_y + route.token_features + 1, dz));
  m_pseudo_tokens = register_parameter(
      "pseudo_tokens", torch::randn({c.options<PseudoTokenOptions>().num_pseudo_tokens, dz}));
  // Initial pseudo-tokens and pseudo-location offsets from a standard normal (paper F.1).
  m_pseudo_offsets = register_parameter(
      "pseudo_offsets",
      torch::randn({c.options<PseudoTokenOptions>().num_pseudo_tokens, route.pairwise_dims}));
  if (c.options<PseudoLocationOptions>().pseudo_locations == "attention") {
    m_psi_query = register_module("psi_query", torch::nn::Linear(dz, dz));
    m_psi_key = register_module("psi_key", torch::nn::Linear(dz, dz));
  }
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    const auto s = std::to_string(l);
    auto block = [&](bool update_locations) {
      return TeAttentionBlock(dz, transformer.num_heads, transformer.head_dim, route.pairwise_dims,
                              te.pairwise_width, te.distance_frequencies, update_locations);
    };
    const bool last = l + 1 == transformer.num_layers;
    m_pseudo_from_context.push_back(
        register_module("pseudo_from_context" + s, block(te.update_locations)));
    // The last layer's context tokens and locations and its target locations would never be
    // read: no context update there, and no target location update.
    if (!last) {
      m_context_from_pseudo.push_back(
          register_module("context_from_pseudo" + s, block(te.update_locations)));
    }
    m_target_from_pseudo.push_back(
        register_module("target_from_pseudo" + s, block(te.update_locations && !last)));
  }
  m_head = register_module("head", GaussianHead(dz, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction TePtTnpImpl::forward_impl(const Task& placed) {
  const auto b = placed.batch_size(), nc = placed.num_context(), nt = placed.num_targets();
  const auto dz = config().options<TransformerOptions>().dim_model;
  const auto in_tokens = place_feature_route(config()).token_features;
  auto [zc, zt] = output_only_tokens(m_embed, placed, dz, in_tokens);
  const auto task = coordinates_only(placed, in_tokens);
  auto u = m_pseudo_tokens.unsqueeze(0).expand({b, -1, -1});
  // Pseudo-locations: a learned offset plus a convex combination of the context locations
  // (paper eq. 11) or their mean, so they translate exactly with the data.
  torch::Tensor v;
  if (nc > 0 && !m_psi_query) {
    v = m_pseudo_offsets.unsqueeze(0) + task.xc.mean(1, true);
  } else if (nc > 0) {
    auto logits = m_psi_query->forward(u).matmul(m_psi_key->forward(zc).transpose(1, 2)) /
                  std::sqrt(static_cast<double>(dz));
    v = m_pseudo_offsets.unsqueeze(0) + torch::softmax(logits, -1).matmul(task.xc);
  } else if (nt > 0) {
    v = m_pseudo_offsets.unsqueeze(0) + task.xt.mean(1, true);
  } else {
    v = m_pseudo_offsets.unsqueeze(0).expand({b, -1, -1});
  }
  auto xc = task.xc;
  auto xt = task.xt;
  for (size_t l = 0; l < m_pseudo_from_context.size(); ++l) {
    auto pseudo = m_pseudo_from_context[l]->forward(u, v, zc, xc);
    u = pseudo.z;
    v = pseudo.x;
    if (l < m_context_from_pseudo.size()) {
      auto context = m_context_from_pseudo[l]->forward(zc, xc, u, v);
      zc = context.z;
      xc = context.x;
    }
    auto target = m_target_from_pseudo[l]->forward(zt, xt, u, v);
    zt = target.z;
    xt = target.x;
  }
  return m_head->forward(zt);
}

ModelSpec pttnp_spec() {
  ModelSpec spec;
  spec.info = {
      "pttnp", "PT-TNP", "Pseudo-token TNP: context summarised by M learned pseudo-tokens.",
      false,   false,    false,
      true,    2};
  spec.make_options = options_of<PtTnpOptions>;
  spec.make = make_model_of<PtTnpImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    const auto& t = c.options<TransformerOptions>();
    const double dz = double(t.dim_model), layers = double(t.num_layers);
    return token_embedder(double(c.dim_x + c.dim_y + 1), dz) +
           double(c.options<PseudoTokenOptions>().num_pseudo_tokens) * dz +
           (3.0 * layers - 1.0) * attention_block(c) + head(c);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const auto& transformer = c.options<TransformerOptions>();
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dx = double(c.dim_x), dy = double(c.dim_y),
                 layers = double(transformer.num_layers),
                 m = double(c.options<PseudoTokenOptions>().num_pseudo_tokens);
    // The last layer has no context update (its result would be unused).
    return embedder(c, nc + nt, dx + dy + 1) + layers * (block(c, m, nc) + block(c, nt, m)) +
           (layers - 1) * block(c, nc, m) + head(c, nt, double(transformer.dim_model));
  };
  return spec;
}

ModelSpec tepttnp_spec() {
  ModelSpec spec;
  spec.info = {
      "tepttnp",
      "TE-PT-TNP",
      "Translation-equivariant pseudo-token TNP: pseudo-tokens carry locations that move with "
      "the data.",
      true,
      false,
      false,
      true,
      2};
  spec.make_options = options_of<TePtTnpOptions>;
  spec.make = make_model_of<TePtTnpImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    const auto& t = c.options<TransformerOptions>();
    const bool update = c.options<TeAttentionOptions>().update_locations;
    const auto route = place_feature_route(c);
    const double dz = double(t.dim_model),
                 m = double(c.options<PseudoTokenOptions>().num_pseudo_tokens);
    double count = token_embedder(double(c.dim_y + route.token_features + 1), dz) +
                   m * (dz + double(route.pairwise_dims)) + head(c);
    if (c.options<PseudoLocationOptions>().pseudo_locations == "attention")
      count += 2.0 * linear(dz, dz);
    for (int64_t l = 0; l < t.num_layers; ++l) {
      const bool last = l + 1 == t.num_layers;
      count += te_attention_block(c, update) + (last ? 0.0 : te_attention_block(c, update)) +
               te_attention_block(c, update && !last);
    }
    return count;
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const auto& transformer = c.options<TransformerOptions>();
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dz = double(transformer.dim_model), dx = double(c.dim_x),
                 layers = double(transformer.num_layers),
                 m = double(c.options<PseudoTokenOptions>().num_pseudo_tokens);
    const bool u = c.options<TeAttentionOptions>().update_locations;
    return te_tokens(c, nc, nt) + linear(m + nc, dz, dz) + 2.0 * m * nc * (dz + dx) +
           layers * te_block(c, m, nc, u) + (layers - 1) * te_block(c, nc, m, u) +
           (layers - 1) * te_block(c, nt, m, u) + te_block(c, nt, m, false) + head(c, nt, dz);
  };
  return spec;
}

}  // namespace npe
