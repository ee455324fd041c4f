#include "models/kinds/bsatnp/bsatnp.h"

#include <cmath>

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/kernels/biased_attention.h"
#include "models/parameter_terms.h"
#include "models/tokens.h"
#include "npe/models/compute_settings.h"

namespace npe {

BiasedAttentionBlockImpl::BiasedAttentionBlockImpl(int64_t dim_model, int64_t num_heads,
                                                   int64_t head_dim, int64_t bias_features,
                                                   int64_t time_bias_features)
    : m_heads(num_heads), m_head_dim(head_dim), m_time_features(time_bias_features) {
  using torch::nn::LayerNorm;
  using torch::nn::LayerNormOptions;
  using torch::nn::Linear;
  using torch::nn::LinearOptions;
  m_norm_q = register_module("norm_q", LayerNorm(LayerNormOptions({dim_model})));
  m_norm_k = register_module("norm_k", LayerNorm(LayerNormOptions({dim_model})));
  m_norm_ff = register_module("norm_ff", LayerNorm(LayerNormOptions({dim_model})));
  const auto inner = num_heads * head_dim;
  m_q = register_module("q", Linear(LinearOptions(dim_model, inner).bias(false)));
  m_k = register_module("k", Linear(LinearOptions(dim_model, inner).bias(false)));
  m_v = register_module("v", Linear(LinearOptions(dim_model, inner).bias(false)));
  m_out = register_module("out", Linear(inner, dim_model));
  // Length scales from 0.1 to 10 input units (rates 1/l^2), log-spaced, the same for every
  // head; amplitudes start at 1 (nearby points attract attention) and are learned per head.
  auto lengths = torch::logspace(-1, 1, bias_features);
  if (time_bias_features > 0)
    lengths = torch::cat({lengths, torch::logspace(-1, 1, time_bias_features)});
  m_log_rates = register_parameter(
      "log_rates", (-2.0 * lengths.log()).unsqueeze(0).repeat({num_heads, 1}).contiguous());
  m_amplitudes = register_parameter("amplitudes",
                                    torch::ones({num_heads, bias_features + time_bias_features}));
  m_feed_forward =
      register_module("feed_forward", Mlp(dim_model, std::vector<int64_t>{dim_model}, dim_model));
}

torch::Tensor BiasedAttentionBlockImpl::forward(const torch::Tensor& zq, const torch::Tensor& xq,
                                                const torch::Tensor& zk, const torch::Tensor& xk,
                                                torch::Tensor* weights) {
  const auto b = zq.size(0), nq = zq.size(1), nk = zk.size(1);
  auto heads = [&](const torch::Tensor& t, int64_t n) {
    return t.view({b, n, m_heads, m_head_dim}).permute({0, 2, 1, 3});
  };
  const auto qn = m_norm_q->forward(zq), kn = m_norm_k->forward(zk);
  const auto q = heads(m_q->forward(qn), nq), k = heads(m_k->forward(kn), nk);
  if (weights && nk > 0)
    *weights = biased_attention_weights(q, k, xq, xk, m_amplitudes, m_log_rates, m_time_features);
  auto attended = biased_attention(q, k, heads(m_v->forward(kn), nk), xq, xk, m_amplitudes,
                                   m_log_rates, {}, m_time_features);
  auto z =
      zq + m_out->forward(attended.permute({0, 2, 1, 3}).reshape({b, nq, m_heads * m_head_dim}));
  return z + m_feed_forward->forward(m_norm_ff->forward(z));
}

BsaTnpImpl::BsaTnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto& bias = c.options<AttentionBiasOptions>();
  const auto& transformer = c.options<TransformerOptions>();
  const auto dz = transformer.dim_model;
  m_embed = register_module("embed", token_embedder(c.dim_y + c.dim_features + 1, dz));
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    auto block = [&] {
      return BiasedAttentionBlock(dz, transformer.num_heads, transformer.head_dim,
                                  bias.bias_features, bias.time_bias_features);
    };
    // share_layer_weights: the context self-attention and the target cross-attention of a
    // layer are one block (Jenson et al.'s shared KRBlock weights).
    m_self.push_back(register_module("self" + std::to_string(l), block()));
    m_cross.push_back(c.options<LayerSharingOptions>().share_layer_weights
                          ? m_self.back()
                          : register_module("cross" + std::to_string(l), block()));
  }
  m_head = register_module("head", GaussianHead(dz, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction BsaTnpImpl::forward_impl(const Task& placed) {
  auto [zc, zt] = output_only_tokens(
      m_embed, placed, config().options<TransformerOptions>().dim_model, config().dim_features);
  const auto task = coordinates_only(placed, config().dim_features);
  {
    // Under bf16 the blocks' linear layers take bfloat16 inputs; the residual stream, layer
    // norms, attention softmax and the Gaussian head stay float32.
    // Only for batches of at least ~1,000 tokens: below that the casts cost more than the
    // products save (prediction at batch 1, N 320: 6.5 ms with autocast, 5.4 without).
    const int64_t tokens = zc.size(0) * (zc.size(1) + zt.size(1));
    const Bf16Autocast bf16(pairwise_precision() == Precision::bf16 && tokens >= 1024,
                            zc.is_cuda());
    for (size_t l = 0; l < m_self.size(); ++l) {
      zc = m_self[l]->forward(zc, task.xc, zc, task.xc);
      const bool last = l + 1 == m_self.size();
      zt = m_cross[l]->forward(zt, task.xt, zc, task.xc,
                               last && m_record_attention ? &m_last_attention : nullptr);
    }
  }
  return m_head->forward(zt.to(torch::kFloat32));
}

ModelSpec bsatnp_spec() {
  ModelSpec spec;
  spec.info = {
      "bsatnp",
      "BSA-TNP",
      "Biased scan attention TNP: attention logits biased by an RBF network of |x - x'|, keys "
      "in chunks with an online softmax (memory linear in N).",
      true,
      true,
      false,
      true,
      2};
  spec.make_options = options_of<BsaTnpOptions>;
  spec.make = make_model_of<BsaTnpImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    const auto& t = c.options<TransformerOptions>();
    const auto& bias = c.options<AttentionBiasOptions>();
    // A biased block: the attention block plus its rates and amplitudes per head and feature.
    const double block =
        attention_block(c) +
        2.0 * double(t.num_heads) * double(bias.bias_features + bias.time_bias_features);
    const double blocks = c.options<LayerSharingOptions>().share_layer_weights ? 1.0 : 2.0;
    return token_embedder(double(c.dim_y + c.dim_features + 1), double(t.dim_model)) +
           blocks * double(t.num_layers) * block + head(c);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const auto& transformer = c.options<TransformerOptions>();
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dx = double(c.dim_x), layers = double(transformer.num_layers);
    // Attention blocks plus the logit bias: per pair, the squared distance and, per head and
    // RBF feature, a multiply, an exponential and a multiply-add (counted as 4).
    const double heads = double(transformer.num_heads),
                 features = double(c.options<AttentionBiasOptions>().bias_features);
    auto bias = [&](double nq, double nk) { return nq * nk * (3.0 * dx + 4.0 * heads * features); };
    return te_tokens(c, nc, nt) +
           layers * (block(c, nc, nc) + bias(nc, nc) + block(c, nt, nc) + bias(nt, nc)) +
           head(c, nt, double(transformer.dim_model));
  };
  // Jenson et al.'s ERA5 model: 5 RBF features over space, 3 over time.
  spec.time_coordinate = [](ModelConfig& c) {
    c.options<AttentionBiasOptions>().time_bias_features = 3;
  };
  return spec;
}

}  // namespace npe
