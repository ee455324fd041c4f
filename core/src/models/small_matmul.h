#pragma once
// Batched products of many small matrices, as attention with few dimensions per head makes them
// (BSA-TNP: 8 heads x 16, a [Tq,16] x [16,Tk] product per batch element and head). libtorch
// 1.13's bmm runs such a batch as one dispatched mm per matrix (select, resolve_conj, a BLAS call
// and its packing each time): about 18 us per 128 x 64 x 16 product, 10 GFLOP/s, half of a BSA-TNP
// training step. Here each product is a plain loop over the rows, vectorised along the output
// row, with no per-matrix dispatch.

#include <torch/types.h>

namespace npe {

/// a [..., M, K] @ b [..., K, P] with the same batch dimensions (no broadcasting), any strides
/// (transposed views need no copy). float32 CPU tensors with K or P at most 64 take the loop
/// kernel; anything else goes to torch::matmul.
torch::Tensor small_batched_matmul(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace npe
