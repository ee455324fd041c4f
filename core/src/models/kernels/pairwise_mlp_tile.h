#pragma once
// A pairwise MLP over one tile of pairs, shared by the fused TE kernels:
// rho (pairwise_kernel_attention.cpp) and phi (pairwise_location_update.cpp) have one shape,
// Linear(w1 [C,I], b1) -> ReLU -> Linear(w2 [C,C], b2) -> ReLU -> Linear(w3 [O,C]), and both
// kernels hold a tile's inputs and output gradients transposed, [I, pairs] and [O, pairs].

#include <torch/types.h>

namespace npe {

/// The MLP's weights in the tile products' dtype (float32 or bfloat16).
struct PairwiseMlpWeights {
  const torch::Tensor& w1;   // [C, I]
  const torch::Tensor& w1t;  // [I, C], contiguous: recomputes the first activation
  const torch::Tensor& b1;   // [C]
  const torch::Tensor& w2;   // [C, C]
  const torch::Tensor& w3;   // [O, C]
};

/// This thread's float32 sums of the parameter gradients; W1's is summed transposed, [I, C]:
/// with the narrow side as the product's rows oneDNN ran it 1.6x faster in bf16 (one tile, one
/// thread, EPYC).
struct PairwiseMlpGradientSums {
  const torch::Tensor& w1t;  // [I, C]
  const torch::Tensor& b1;   // [C]
  const torch::Tensor& w2;   // [C, C]
  const torch::Tensor& b2;   // [C]
  const torch::Tensor& w3;   // [O, C]
};

/// Whether pairwise_mlp_tile_forward handles an MLP of I inputs, width C and O outputs: its
/// activations for 16 pairs live in a fixed stack buffer.
bool pairwise_mlp_tile_forward_applies(int64_t inputs, int64_t width, int64_t outputs);

/// The MLP's output for a tile of pairs, float32, where nothing is kept for a backward pass:
/// out_t [O, pairs] = W3 relu(W2 relu(W1 in_t + b1) + b2) (+ b3 when defined), in_t [I, pairs],
/// each with unit stride along the pairs (strided rows are fine). The products of a 16-wide MLP
/// have 16-long rows, too short for a matrix product to reach its rate (oneDNN's three took half
/// of the images tab's TE-PT-TNP); here 16 pairs at a time go through all three layers with
/// their activations in vector registers and L1, each weight used for 16 pairs at once.
void pairwise_mlp_tile_forward(const torch::Tensor& w1, const torch::Tensor& b1,
                               const torch::Tensor& w2, const torch::Tensor& b2,
                               const torch::Tensor& w3, const torch::Tensor& b3,
                               const torch::Tensor& in_t, const torch::Tensor& out_t);

/// in_t [I, pairs] and grad_out_t [O, pairs] in the products' dtype; h2 [pairs, C] the second
/// activation kept by the forward pass; h1, g1, g2 [pairs, C] scratch in that dtype. Adds the
/// tile's parameter gradients to `sums` and writes the gradient of the inputs to grad_in_t
/// [I, pairs] (float32, unit stride along the pairs; a strided view is fine).
void pairwise_mlp_tile_backward(const PairwiseMlpWeights& weights, const torch::Tensor& in_t,
                                const torch::Tensor& grad_out_t, const torch::Tensor& h2,
                                const torch::Tensor& h1, const torch::Tensor& g1,
                                const torch::Tensor& g2, const PairwiseMlpGradientSums& sums,
                                const torch::Tensor& grad_in_t);

}  // namespace npe
