#pragma once
// The translation-invariant attention bias of BSA-TNP, an RBF network of the squared distance
// between query and key locations per head,
//
//   bias^(h)_nm = sum_f a^(h)_f exp(-b^(h)_f ||x_n - x_m||^2),
//
// and its gradients with respect to a and b. It costs F exponentials per pair and head, which
// made it the dominant cost of the biased attention when built from libtorch operations (F
// [B,H,Tq,Tk] temporaries, a scalar-speed exp). On the CPU in float32 it is one fused pass per
// row of pairs instead: distances computed once per (batch, query) and shared by the heads, a
// polynomial exponential the compiler vectorises (relative error ~1.2e-7, like std::exp in
// float), nothing of size Tq * Tk * F allocated. Other devices and types use libtorch.

#include <torch/types.h>

namespace npe {

/// logits [B,H,Tq,Tk] += bias, from xq [B,Tq,Dx], xk [B,Tk,Dx], amplitudes a and rates b [H,F].
void add_rbf_bias_(torch::Tensor& logits, const torch::Tensor& xq, const torch::Tensor& xk,
                   const torch::Tensor& amplitudes, const torch::Tensor& rates);

/// grad_amplitudes and grad_rates [H,F] += the gradients of sum(grad_logits * bias) with respect
/// to a and b, for grad_logits [B,H,Tq,Tk] and the other arguments as in add_rbf_bias_.
void accumulate_rbf_bias_gradients(const torch::Tensor& grad_logits, const torch::Tensor& xq,
                                   const torch::Tensor& xk, const torch::Tensor& amplitudes,
                                   const torch::Tensor& rates, torch::Tensor& grad_amplitudes,
                                   torch::Tensor& grad_rates);

}  // namespace npe
