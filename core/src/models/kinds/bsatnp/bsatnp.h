#pragma once

#include <vector>

#include "npe/models/model.h"
#include "npe/models/model_spec.h"
#include "npe/models/modules.h"

namespace npe {

/// Pre-norm residual block of biased attention (biased_attention.h): z += W_o BSA(LN(z_q),
/// LN(z_k)) with each head's logits biased by an RBF network of ||x_q - x_k||, then
/// z += FF(LN(z)). Locations enter only through that bias.
class BiasedAttentionBlockImpl : public torch::nn::Module {
 public:
  /// time_bias_features > 0: separate biases over space (all coordinates but the last, with
  /// bias_features RBFs) and time (the last coordinate, with time_bias_features RBFs).
  BiasedAttentionBlockImpl(int64_t dim_model, int64_t num_heads, int64_t head_dim,
                           int64_t bias_features, int64_t time_bias_features = 0);
  /// zq [B,Nq,D], xq [B,Nq,Dx], zk [B,Nk,D], xk [B,Nk,Dx] -> [B,Nq,D]. If weights is
  /// non-null it receives the attention weights [B,H,Nq,Nk] (formed in one piece).
  torch::Tensor forward(const torch::Tensor& zq, const torch::Tensor& xq, const torch::Tensor& zk,
                        const torch::Tensor& xk, torch::Tensor* weights = nullptr);

 private:
  torch::nn::LayerNorm m_norm_q{nullptr}, m_norm_k{nullptr}, m_norm_ff{nullptr};
  torch::nn::Linear m_q{nullptr}, m_k{nullptr}, m_v{nullptr}, m_out{nullptr};
  /// a^(h)_f and log b^(h)_f of the bias sum_f a_f exp(-b_f ||x_q - x_k||^2), [H,F] (the
  /// space features, then the time features).
  torch::Tensor m_amplitudes, m_log_rates;
  Mlp m_feed_forward{nullptr};
  int64_t m_heads, m_head_dim, m_time_features;
};
TORCH_MODULE(BiasedAttentionBlock);

/// BSA-TNP (Jenson et al.): a TNP whose tokens depend on outputs only (context MLP([y, 0]),
/// targets MLP([0, 1])) and whose attention blocks see locations only through a translation-
/// invariant bias of the logits, so the model is translation equivariant by construction. Per
/// layer, context self-attention, then target cross-attention to the context; attention runs
/// over key chunks with an online softmax, so memory grows with N_c + N_t, not N_c * N_t.
class BsaTnpImpl final : public NeuralProcessImpl {
 public:
  explicit BsaTnpImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  Mlp m_embed{nullptr};
  std::vector<BiasedAttentionBlock> m_self, m_cross;
  GaussianHead m_head{nullptr};
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The bsatnp kind's options.
using BsaTnpOptions = OptionsOf<TransformerOptions, LayerSharingOptions, AttentionBiasOptions>;
ModelSpec bsatnp_spec();

}  // namespace npe
