#pragma once
// How the fused pairwise kernels (pairwise_kernel_attention.cpp, pairwise_location_update.cpp)
// cut the pairs (query n, key m) of a batch into tiles that stay in cache, and the views of one
// tile they share.

#include <algorithm>
#include <cstdint>

#include <ATen/Parallel.h>
#include <torch/torch.h>

namespace npe::pair_tiles {

// Bytes of one pairwise activation [pairs, width] per tile: a float32 [2048, 128] tile (1 MiB)
// and its neighbours stay in L2, where a 128x128 product runs about 1.5x faster than on a whole
// pair tensor (measured on the 2-core EPYC: 114 vs 77 GFLOP/s on one thread); bfloat16 tiles
// hold twice the pairs (measured: 477 ms per reference step with 4096 pairs, 575 with 2048).
inline constexpr int64_t kActivationBytesPerTile = int64_t{1} << 20;

inline int64_t pairs_per_tile(int64_t width, torch::ScalarType dtype) {
  return std::max<int64_t>(1, kActivationBytesPerTile / (width * c10::elementSize(dtype)));
}

// A tile: batch element b, query rows [q0, q0 + rows), every key.
struct Tile {
  int64_t b, q0, rows;
};

struct Tiling {
  int64_t queries, rows_per_tile, tiles_per_batch, count;
  Tiling(int64_t batch, int64_t queries_, int64_t keys, int64_t pairs_per_tile)
      : queries(queries_),
        rows_per_tile(std::max<int64_t>(1, pairs_per_tile / std::max<int64_t>(1, keys))),
        tiles_per_batch((queries + rows_per_tile - 1) / rows_per_tile),
        count(batch * tiles_per_batch) {}
  Tile operator[](int64_t i) const {
    const int64_t b = i / tiles_per_batch, q0 = (i % tiles_per_batch) * rows_per_tile;
    return {b, q0, std::min(rows_per_tile, queries - q0)};
  }
};

// [rows, H, D] permuted to [H, rows, D]: the per-head products run batched over the heads on
// such strided views.
inline torch::Tensor heads_first(const torch::Tensor& rows_heads_dim) {
  return rows_heads_dim.permute({1, 0, 2});
}

// A tile of a tensor laid out [B, H, Nq, Nk] (the attention weights), as [H, rows * Nk].
inline torch::Tensor flat_tile(const torch::Tensor& heads_rows_keys, const Tile& tile) {
  const auto t = heads_rows_keys.select(0, tile.b).narrow(1, tile.q0, tile.rows);
  return t.view({t.size(0), tile.rows * t.size(2)});
}

// The tile's rows of a tensor laid out [B, Nq, ...], as [rows * (Nk or 1), width].
inline torch::Tensor tile_rows(const torch::Tensor& t, const Tile& tile, int64_t width) {
  return t.select(0, tile.b).narrow(0, tile.q0, tile.rows).view({-1, width});
}

// fn(begin, end) over ranges of the tiles [0, count), on libtorch's intra-op threads (OpenMP;
// core is compiled with it, see core/CMakeLists.txt). Grad mode is per thread, and the worker
// threads start with it on: there the tiles' out= operations on views of tensors that require
// grad would refuse to run, and in-place ones would be recorded. Inside an autograd Function's
// forward and backward passes nothing is recorded, on any thread.
template <class F>
void for_each_tile_range(int64_t count, const F& fn) {
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    const torch::NoGradGuard no_grad;
    fn(begin, end);
  });
}

}  // namespace npe::pair_tiles
