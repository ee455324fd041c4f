#pragma once
// Memory-efficient biased attention (Jenson et al., "Scalable Spatiotemporal Inference with
// Biased Scan Attention Transformer Neural Processes"): softmax attention whose logits get a
// translation-invariant bias per head, an RBF network of the distance between query and key
// locations,
//
//   logit^(h)_nm = q^(h)_n . k^(h)_m / sqrt(D) + sum_f a^(h)_f exp(-b^(h)_f ||x_n - x_m||^2),
//
// computed over chunks of keys with an online softmax (running maximum and sum per query), the
// bias built on the fly, and a backward pass that recomputes each chunk's weights from the
// saved log-sum-exp instead of storing them. Memory grows with Nq + Nk, not Nq * Nk.

#include <torch/types.h>

namespace npe {

struct BiasedAttentionChunks {
  /// Queries and keys per chunk; 0 picks sizes that keep each chunk's [B,H,Tq,Tk] logits near
  /// 2^21 elements (8 MiB in float32).
  int64_t queries = 0, keys = 0;
  /// The backward pass recomputes each chunk's logits even where the forward pass could keep
  /// them (it keeps them when they total at most 64 MiB); large inputs always recompute.
  bool recompute_logits = false;
};

/// q [B,H,Nq,D], k [B,H,Nk,D], v [B,H,Nk,Dv], xq [B,Nq,Dx], xk [B,Nk,Dx], amplitudes a [H,F],
/// log_rates log b [H,F] -> [B,H,Nq,Dv]. Differentiable with respect to q, k, v, a and log b
/// (locations are data: no gradient). Nk = 0 gives zeros. With time_features > 0 the last
/// time_features RBF features see only the distance in the last input dimension (time) and
/// the others only the distance over the rest (space): separate space and time biases.
torch::Tensor biased_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& xq,
                               const torch::Tensor& xk, const torch::Tensor& amplitudes,
                               const torch::Tensor& log_rates, BiasedAttentionChunks chunks = {},
                               int64_t time_features = 0);

/// The attention weights [B,H,Nq,Nk] of biased_attention() with the same arguments, formed in
/// one piece (memory Nq * Nk): for inspecting a prediction, e.g. the explorer's overlay, not for
/// training. Nk = 0 gives an empty tensor.
torch::Tensor biased_attention_weights(const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& xq, const torch::Tensor& xk,
                                       const torch::Tensor& amplitudes,
                                       const torch::Tensor& log_rates, int64_t time_features = 0);

}  // namespace npe
