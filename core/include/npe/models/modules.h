#pragma once
// Building blocks shared by the models: MLPs, the Gaussian head, attention layers.

#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "npe/ground/prediction.h"
#include "npe/models/context_spectrum.h"

namespace npe {

/// Fully connected network: in -> hidden... -> out with ReLU between layers (none after the
/// last one).
class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(int64_t in, const std::vector<int64_t>& hidden, int64_t out);
  torch::Tensor forward(torch::Tensor x);
  /// The linear layers, first to last (ReLU between them): for fused kernels that run the MLP.
  const std::vector<torch::nn::Linear>& layers() const { return m_layers; }

 private:
  std::vector<torch::nn::Linear> m_layers;
};
TORCH_MODULE(Mlp);

/// Decoder head: MLP with two hidden layers mapping a representation [..., in] to a Gaussian
/// over [..., Dy]. Heteroscedastic: stddev = min_stddev + sqrt(softplus(raw)). Homoscedastic:
/// one learned noise level per output dimension.
class GaussianHeadImpl : public torch::nn::Module {
 public:
  GaussianHeadImpl(int64_t in, int64_t hidden, int64_t dim_y, bool heteroscedastic,
                   double min_stddev);
  Prediction forward(const torch::Tensor& z);

 private:
  Mlp m_mlp{nullptr};
  torch::Tensor m_log_noise;
  int64_t m_dim_y;
  bool m_heteroscedastic;
  double m_min_stddev;
};
TORCH_MODULE(GaussianHead);

/// Standard multi-head attention. Queries [B,Nq,D] attend to keys/values [B,Nk,D]. With
/// Nk = 0 the attention output is zero (nothing to attend to).
class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  MultiHeadAttentionImpl(int64_t dim_model, int64_t num_heads, int64_t head_dim);
  /// If weights is non-null it receives the attention weights [B,H,Nq,Nk]. An optional boolean
  /// mask [Nq,Nk] says which keys each query may attend to; a query allowed none gets zero.
  torch::Tensor forward(const torch::Tensor& zq, const torch::Tensor& zk,
                        torch::Tensor* weights = nullptr, const torch::Tensor& mask = {});

 private:
  torch::nn::Linear m_q{nullptr}, m_k{nullptr}, m_v{nullptr}, m_out{nullptr};
  int64_t m_heads, m_head_dim;
};
TORCH_MODULE(MultiHeadAttention);

/// Pre-norm residual attention block: z += MHA(LN(z), LN(context)); z += FF(LN(z)).
class AttentionBlockImpl : public torch::nn::Module {
 public:
  AttentionBlockImpl(int64_t dim_model, int64_t num_heads, int64_t head_dim);
  torch::Tensor forward(const torch::Tensor& zq, const torch::Tensor& zk,
                        torch::Tensor* weights = nullptr, const torch::Tensor& mask = {});

 private:
  torch::nn::LayerNorm m_norm_q{nullptr}, m_norm_k{nullptr}, m_norm_ff{nullptr};
  MultiHeadAttention m_attention{nullptr};
  Mlp m_feed_forward{nullptr};
};
TORCH_MODULE(AttentionBlock);

/// Translation-equivariant multi-head attention (paper Section 3). The logit of head h for
/// query n and key m is rho([q_n.k_m / sqrt(d_h)]_{h=1..H}, x_n - x_m)_h, and, optionally,
/// locations are updated as x_n += mean_m (x_n - x_m) phi(alpha_{n,m}) (paper eq. 10), where
/// alpha_{n,m} in R^H are the attention weights after the softmax over keys. Only differences
/// of locations enter (optionally also as Fourier features), so the layer is exactly
/// translation equivariant.
class TeMultiHeadAttentionImpl : public torch::nn::Module {
 public:
  /// context_frequencies J > 0: rho also sees cos and sin of the context's J strongest
  /// frequencies per dimension (set_context_spectrum), weighted by their power.
  TeMultiHeadAttentionImpl(int64_t dim_model, int64_t num_heads, int64_t head_dim, int64_t dim_x,
                           int64_t pairwise_width, int64_t distance_frequencies,
                           bool update_locations, int64_t context_frequencies = 0);
  /// The context's spectrum for the next forward calls (a layer with context_frequencies).
  void set_context_spectrum(ContextSpectrum spectrum) { m_spectrum = std::move(spectrum); }
  bool uses_context_spectrum() const { return !m_rho_spectrum.is_empty(); }

  struct Output {
    torch::Tensor z;        ///< [B,Nq,D]
    torch::Tensor x;        ///< updated query locations [B,Nq,Dx]
    torch::Tensor weights;  ///< attention weights [B,H,Nq,Nk] when requested
  };
  /// zq [B,Nq,D], xq [B,Nq,Dx], zk [B,Nk,D], xk [B,Nk,Dx].
  Output forward(const torch::Tensor& zq, const torch::Tensor& xq, const torch::Tensor& zk,
                 const torch::Tensor& xk, bool return_weights = false);

 private:
  // Between the projections: from q [B,Nq,H,Dh], k and v [B,H,Nk,Dh] to the attended values
  // [B,Nq,H*Dh], the moved locations (with the location update) and the weights [B,H,Nq,Nk]
  // (when asked for).
  struct Pairwise {
    torch::Tensor attended, x, weights;
  };
  // Chooses the implementation (compute_settings.h) and how the queries are split.
  Pairwise pairwise_part_in_blocks(const torch::Tensor& q, const torch::Tensor& xq,
                                   const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& xk, bool return_weights);
  Pairwise pairwise_part(const torch::Tensor& q, const torch::Tensor& xq, const torch::Tensor& k,
                         const torch::Tensor& v, const torch::Tensor& xk, bool return_weights,
                         bool fused);
  // Bytes per query-key pair that the fused kernel keeps for the backward pass (fused) or
  // that the plain path holds while it is differentiated.
  int64_t pair_bytes(const torch::Tensor& q, bool fused) const;

  torch::nn::Linear m_q{nullptr}, m_k{nullptr}, m_v{nullptr}, m_out{nullptr};
  // rho's first layer is split into a part acting on the dot products and a part acting on
  // x_n - x_m, avoiding a [B,Nq,Nk,H+Dx] concatenation.
  torch::nn::Linear m_rho_dots{nullptr}, m_rho_dx{nullptr}, m_rho_hidden{nullptr},
      m_rho_out{nullptr};
  // With distance_frequencies F > 0: rho's first layer also acts on cos and sin of
  // omega_f (x_n - x_m)_d, F learnt angular frequencies shared by the D_x dimensions.
  torch::nn::Linear m_rho_fourier{nullptr};
  torch::Tensor m_frequencies;
  // With context_frequencies J > 0: rho's first layer also acts on w_j cos(omega_j (x_n -
  // x_m)_d) and w_j sin(...), the context's peaks (context_spectrum.h).
  torch::nn::Linear m_rho_spectrum{nullptr};
  ContextSpectrum m_spectrum;
  Mlp m_phi{nullptr};
  int64_t m_heads, m_head_dim;
  bool m_update_locations;
};
TORCH_MODULE(TeMultiHeadAttention);

/// Pre-norm residual TE attention block; returns updated tokens and locations.
class TeAttentionBlockImpl : public torch::nn::Module {
 public:
  TeAttentionBlockImpl(int64_t dim_model, int64_t num_heads, int64_t head_dim, int64_t dim_x,
                       int64_t pairwise_width, int64_t distance_frequencies, bool update_locations,
                       int64_t context_frequencies = 0);
  void set_context_spectrum(ContextSpectrum spectrum) {
    m_attention->set_context_spectrum(std::move(spectrum));
  }
  TeMultiHeadAttentionImpl::Output forward(const torch::Tensor& zq, const torch::Tensor& xq,
                                           const torch::Tensor& zk, const torch::Tensor& xk,
                                           bool return_weights = false);

 private:
  torch::nn::LayerNorm m_norm_q{nullptr}, m_norm_k{nullptr}, m_norm_ff{nullptr};
  TeMultiHeadAttention m_attention{nullptr};
  Mlp m_feed_forward{nullptr};
};
TORCH_MODULE(TeAttentionBlock);

}  // namespace npe
