#pragma once
// TE attention's location update (TE-TNP paper, eq. 10) as one fused, tiled CPU operation with
// its own backward pass: x_n + (1/Nk) sum_m (x_n - x_m) phi(alpha_nm), phi an MLP on each pair's
// attention weights.
//
// phi is as wide as rho (pairwise_kernel_attention.h) and runs on as many pairs, so done with
// whole-tensor libtorch operations in float32 it cost more than the fused attention itself:
// the paper-size TE-TNP trained 2.6x slower in bf16 with the update than without it (30 steps,
// one thread, AVX512-BF16 EPYC: 35-37 s against 13-15 s). Here phi runs over the same cached
// tiles as rho, with the same oneDNN products (bias and ReLU fused, bfloat16 where asked); the
// forward pass keeps phi's second activation and the scores phi(alpha), the backward pass
// recomputes the first.

#include <torch/types.h>

#include "npe/models/compute_settings.h"

namespace npe {

/// weights [B,H,Nq,Nk] (the attention weights alpha, heads first, as pairwise_kernel_attention
/// returns them), xq [B,Nq,Dx], xk [B,Nk,Dx]; phi = Linear(w1 [C,H], b1) -> ReLU ->
/// Linear(w2 [C,C], b2) -> ReLU -> Linear(w3 [1,C], b3). Returns the updated query locations
/// [B,Nq,Dx], differentiable with respect to every tensor argument. All tensors float32 on the
/// CPU; precision bf16 runs phi's matrix products in bfloat16 and everything else in float32.
/// Differences x_n - x_m are formed before they are weighted, so locations far from the origin
/// do not cancel.
torch::Tensor pairwise_location_update(const torch::Tensor& weights, const torch::Tensor& xq,
                                       const torch::Tensor& xk, const torch::Tensor& w1,
                                       const torch::Tensor& b1, const torch::Tensor& w2,
                                       const torch::Tensor& b2, const torch::Tensor& w3,
                                       const torch::Tensor& b3, Precision precision);

}  // namespace npe
