#include "pairwise_location_update.h"

#include <torch/torch.h>

#include "npe/models/tile_matmul.h"
#include "pair_tiles.h"
#include "pairwise_mlp_tile.h"

namespace npe {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// x_n - x_m for the pairs of a tile: [rows, Nk, Dx], in float32.
Tensor tile_differences(const pair_tiles::Tile& tile, const Tensor& xq, const Tensor& xk) {
  return xq.select(0, tile.b).narrow(0, tile.q0, tile.rows).unsqueeze(1) -
         xk.select(0, tile.b).unsqueeze(0);
}

class PairwiseLocationUpdate : public torch::autograd::Function<PairwiseLocationUpdate> {
 public:
  static variable_list forward(AutogradContext* ctx, Tensor weights, Tensor xq, Tensor xk,
                               const Tensor& w1, const Tensor& b1, const Tensor& w2,
                               const Tensor& b2, const Tensor& w3, const Tensor& b3, bool bf16,
                               bool keep_for_backward) {
    using namespace pair_tiles;
    const auto matmul_dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
    weights = weights.contiguous();
    xq = xq.contiguous();
    xk = xk.contiguous();
    const int64_t batch = weights.size(0), queries = weights.size(2), keys = weights.size(3);
    const int64_t width = w1.size(0);
    // Transposed once, so that each tile's products are plain row-major x @ W^T.
    const auto w1t = w1.t().to(matmul_dtype).contiguous();
    const auto w2t = w2.t().to(matmul_dtype).contiguous();
    const auto w3m = w3.to(matmul_dtype).contiguous();
    const auto b1m = b1.to(matmul_dtype).contiguous(), b2m = b2.to(matmul_dtype).contiguous();

    const auto f32 = weights.options();
    const auto mm_options = f32.dtype(matmul_dtype);
    auto moved = torch::empty_like(xq);
    // phi(alpha_nm) per pair, and phi's second activation, for the backward pass.
    auto scores = torch::empty({batch, queries, keys}, f32);
    Tensor hidden2;
    if (keep_for_backward) hidden2 = torch::empty({batch, queries, keys, width}, mm_options);
    const Tiling tiling(batch, queries, keys, pairs_per_tile(width, matmul_dtype));
    const int64_t max_pairs = tiling.rows_per_tile * keys;
    // A prediction in float32 (nothing kept) runs phi without products, 16 pairs at a time.
    const bool phi_in_registers =
        !keep_for_backward && !bf16 && pairwise_mlp_tile_forward_applies(w1.size(1), width, 1);
    pair_tiles::for_each_tile_range(tiling.count, [&](int64_t begin, int64_t end) {
      Tensor scratch1, scratch2;  // the activations; the second only when nothing is kept
      if (!phi_in_registers) scratch1 = torch::empty({max_pairs, width}, mm_options);
      if (!phi_in_registers && !keep_for_backward) scratch2 = torch::empty_like(scratch1);
      for (int64_t i = begin; i < end; ++i) {
        const auto tile = tiling[i];
        const int64_t pairs = tile.rows * keys;
        const auto alpha_t = flat_tile(weights, tile).to(matmul_dtype);  // [H, pairs]
        const auto s = tile_rows(scores, tile, keys);                    // [rows, Nk]
        if (phi_in_registers) {
          pairwise_mlp_tile_forward(w1, b1, w2, b2, w3, b3, alpha_t, s.view({1, pairs}));
        } else {
          auto p1 = scratch1.narrow(0, 0, pairs);
          auto p2 =
              keep_for_backward ? tile_rows(hidden2, tile, width) : scratch2.narrow(0, 0, pairs);
          tile_matmul(p1, alpha_t.t(), w1t, {&b1m, true});
          tile_matmul(p2, p1, w2t, {&b2m, true});
          tile_matmul(s.view({1, pairs}), w3m, p2.t());
          s.add_(b3);
        }
        const auto diff = tile_differences(tile, xq, xk);  // [rows, Nk, Dx]
        tile_rows(moved, tile, xq.size(2))
            .copy_(xq.select(0, tile.b).narrow(0, tile.q0, tile.rows) +
                   (diff * s.unsqueeze(2)).mean(1));
      }
    });
    ctx->saved_data["bf16"] = bf16;
    ctx->save_for_backward({weights, xq, xk, w1, b1, w2, w3, scores, hidden2});
    return {moved};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    using namespace pair_tiles;
    const Tensor grad_moved = grads[0].defined() ? grads[0].contiguous() : Tensor();
    if (!grad_moved.defined()) return variable_list(11);
    const bool bf16 = ctx->saved_data["bf16"].toBool();
    const auto matmul_dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
    const auto saved = ctx->get_saved_variables();
    const auto &weights = saved[0], &xq = saved[1], &xk = saved[2], &scores = saved[7],
               &hidden2 = saved[8];
    const auto w1 = saved[3].to(matmul_dtype), w2 = saved[5].to(matmul_dtype),
               w3 = saved[6].to(matmul_dtype);
    const auto w1t = w1.t().contiguous(), b1m = saved[4].to(matmul_dtype).contiguous();
    const int64_t batch = weights.size(0), heads = weights.size(1), queries = weights.size(2),
                  keys = weights.size(3), dim_x = xq.size(2), width = w1.size(0);

    // Gradients summed over tiles get one float32 accumulator per thread.
    const int64_t threads = at::get_num_threads();
    const auto f32 = weights.options();
    auto per_thread = [&](std::vector<int64_t> shape) {
      shape.insert(shape.begin(), threads);
      return torch::zeros(shape, f32);
    };
    // W1's gradient is summed transposed (alpha^T g1, [H, C]), as in the attention kernel.
    auto acc_w1t = per_thread({heads, width}), acc_b1 = per_thread({width});
    auto acc_w2 = per_thread({width, width}), acc_b2 = per_thread({width});
    auto acc_w3 = per_thread({1, width}), acc_b3 = per_thread({1});
    auto acc_xk = per_thread({batch, keys, dim_x});
    auto grad_weights = torch::empty_like(weights);
    auto grad_xq = torch::empty_like(xq);

    const Tiling tiling(batch, queries, keys, pairs_per_tile(width, matmul_dtype));
    const int64_t max_pairs = tiling.rows_per_tile * keys;
    const double inverse_keys = 1.0 / double(keys);
    pair_tiles::for_each_tile_range(tiling.count, [&](int64_t begin, int64_t end) {
      const int64_t t = at::get_thread_num();
      auto p1_buffer = torch::empty({max_pairs, width}, f32.dtype(matmul_dtype));
      auto g1_buffer = torch::empty({max_pairs, width}, f32.dtype(matmul_dtype));
      auto g2_buffer = torch::empty({max_pairs, width}, f32.dtype(matmul_dtype));
      for (int64_t i = begin; i < end; ++i) {
        const auto tile = tiling[i];
        const int64_t pairs = tile.rows * keys;
        // Back through x_n + (1/Nk) sum_m (x_n - x_m) s_nm, s = phi(alpha).
        const auto s = tile_rows(scores, tile, keys);       // [rows, Nk]
        const auto g = tile_rows(grad_moved, tile, dim_x);  // [rows, Dx]
        tile_rows(grad_xq, tile, dim_x).copy_(g * (1.0 + s.sum(1, true) * inverse_keys));
        acc_xk[t][tile.b].addmm_(s.t(), g, 1.0, -inverse_keys);
        const auto diff = tile_differences(tile, xq, xk);
        const auto grad_s = ((diff * g.unsqueeze(1)).sum(2) * inverse_keys).view({1, pairs});
        acc_b3[t].add_(grad_s.sum());

        // Back through phi.
        pairwise_mlp_tile_backward(
            {w1, w1t, b1m, w2, w3}, flat_tile(weights, tile).to(matmul_dtype),
            grad_s.to(matmul_dtype), tile_rows(hidden2, tile, width), p1_buffer.narrow(0, 0, pairs),
            g1_buffer.narrow(0, 0, pairs), g2_buffer.narrow(0, 0, pairs),
            {acc_w1t[t], acc_b1[t], acc_w2[t], acc_b2[t], acc_w3[t]},
            flat_tile(grad_weights, tile));
      }
    });
    return {grad_weights,  grad_xq,       acc_xk.sum(0), acc_w1t.sum(0).t(),
            acc_b1.sum(0), acc_w2.sum(0), acc_b2.sum(0), acc_w3.sum(0),
            acc_b3.sum(0), Tensor(),      Tensor()};
  }
};

}  // namespace

torch::Tensor pairwise_location_update(const torch::Tensor& weights, const torch::Tensor& xq,
                                       const torch::Tensor& xk, const torch::Tensor& w1,
                                       const torch::Tensor& b1, const torch::Tensor& w2,
                                       const torch::Tensor& b2, const torch::Tensor& w3,
                                       const torch::Tensor& b3, Precision precision) {
  // Decided here, as in pairwise_kernel_attention: inside forward() gradient mode is off.
  bool keep_for_backward = false;
  if (torch::GradMode::is_enabled()) {
    for (const auto* t : {&weights, &xq, &xk, &w1, &b1, &w2, &b2, &w3, &b3}) {
      keep_for_backward = keep_for_backward || t->requires_grad();
    }
  }
  return PairwiseLocationUpdate::apply(weights, xq, xk, w1, b1, w2, b2, w3, b3,
                                       precision == Precision::bf16, keep_for_backward)[0];
}

}  // namespace npe
