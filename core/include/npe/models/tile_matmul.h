#pragma once
// One matrix product of the fused attention kernels' tiles, with its epilogue (bias, ReLU, or
// accumulation into the output) done in the same call.
//
// Where the build found oneDNN (Debian's libdnnl-dev: the library Debian's libtorch itself calls
// for bfloat16 products), the product runs as a oneDNN matmul primitive, cached per shape and
// thread, with the epilogue fused into its output loop; that saves the separate bias, ReLU,
// conversion and accumulation passes over each tile and, in float32, replaces OpenBLAS's
// AVX2 kernels by oneDNN's AVX-512 ones. Elsewhere (no oneDNN headers, or another libtorch) the
// same call is composed of libtorch operations, with the same result up to rounding.

#include <string>

#include <torch/types.h>

namespace npe {

struct TileMatmulEpilogue {
  const torch::Tensor* bias = nullptr;  // [N], added to every row
  bool relu = false;                    // max(0, .) after the bias
  bool accumulate = false;              // out += product instead of out = product
};

/// out [M,N] (=|+=) a [M,K] @ b [K,N] with the epilogue. a and b may be any strided 2-D views
/// (transposes included) of float32 or bfloat16 data, of one dtype; out is float32 or of a's
/// dtype, with unit stride along N. Products accumulate in float32.
///
/// Batched: out [G,M,N] (=|+=) a [G,M,K] @ b [G,K,N], one product per g (the attention heads),
/// all three strided views, e.g. the heads of a [rows, heads, dim] tensor permuted to the front;
/// no bias. Where out's or a's batch stride is not the largest (heads interleaved in both), the
/// oneDNN build falls back to its slow reference kernel, so callers keep one of them dense.
void tile_matmul(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                 const TileMatmulEpilogue& epilogue = {});

/// Whether tile_matmul runs on oneDNN in this build.
bool tile_matmul_uses_onednn();

/// The version of oneDNN the products run on ("2.6.3"), or empty where they do not use it.
std::string tile_matmul_onednn_version();

/// Runs every oneDNN product on guarded copies of its operands (4 KiB of a known pattern around
/// each, the holes of strided views filled too) and checks them afterwards: a product that
/// writes outside its output throws, naming its layout. A hunt for stray writes in the JIT
/// kernels, which the sanitizers cannot see; several times slower. Process-wide; on at start
/// when the environment sets NPE_TILE_MATMUL_GUARD.
void set_tile_matmul_guard(bool on);
bool tile_matmul_guard();

}  // namespace npe
