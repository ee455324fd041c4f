#pragma once
// The core of TE attention (paper Section 3) as one fused, tiled CPU operation with its own
// backward pass.
//
// For every pair (query n, key m) an MLP rho maps the pair's inputs u_nm (the H scaled dot
// products q_n.k_m / sqrt(D_h), then x_n - x_m) to H logits; a softmax over the keys turns them
// into attention weights alpha_nm, which average the values. Done with whole-tensor libtorch
// operations, every layer of rho reads and writes [B*Nq*Nk, width] tensors of hundreds of MB,
// and its large matrix products run at two thirds of the speed of small ones. Here the pairs
// are processed in tiles of a few thousand that stay in cache, from the dot products through
// rho, the softmax and the weighted sum, tiles running in parallel. The forward pass keeps only
// rho's second hidden activation (the backward pass recomputes the first per tile); the
// backward pass accumulates the gradients of keys, values and weights per thread.

#include <vector>

#include <torch/types.h>

#include "npe/models/compute_settings.h"

namespace npe {

/// q [B,Nq,H,Dh], k [B,Nk,H,Dh], v [B,Nk,H,Dv], xq [B,Nq,Dx], xk [B,Nk,Dx]; rho =
/// Linear(w1 [C,H+Dx], b1) -> ReLU -> Linear(w2 [C,C], b2) -> ReLU -> Linear(w3 [H,C], b3).
/// Returns {attended [B,Nq,H,Dv], weights [B,H,Nq,Nk]} (the attention weights alpha_nm, heads
/// first), both differentiable with respect to every tensor argument. All tensors float32 on the
/// CPU (pairwise_kernel_attention_applies); precision bf16 runs rho's matrix products in bfloat16
/// and everything else in float32.
std::vector<torch::Tensor> pairwise_kernel_attention(
    const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& xq,
    const torch::Tensor& xk, const torch::Tensor& w1, const torch::Tensor& b1,
    const torch::Tensor& w2, const torch::Tensor& b2, const torch::Tensor& w3,
    const torch::Tensor& b3, Precision precision);

/// Whether the fused kernel handles tensors like `t` (float32 on the CPU).
bool pairwise_kernel_attention_applies(const torch::Tensor& t);

}  // namespace npe
