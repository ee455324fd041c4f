#include "pairwise_kernel_attention.h"

#include <algorithm>
#include <cmath>

#include <torch/torch.h>

#include "attention_tile_passes.h"
#include "npe/models/tile_matmul.h"
#include "pair_tiles.h"
#include "pairwise_mlp_tile.h"

namespace npe {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

using pair_tiles::flat_tile;
using pair_tiles::heads_first;
using pair_tiles::pairs_per_tile;
using pair_tiles::Tile;
using pair_tiles::Tiling;

// Sizes of one call, named once.
struct Sizes {
  int64_t batch, queries, keys, heads, key_dim, value_dim, dim_x, width, input_dim;
  Sizes(const Tensor& q, const Tensor& v, const Tensor& xq, const Tensor& w1)
      : batch(q.size(0)),
        queries(q.size(1)),
        keys(v.size(1)),
        heads(q.size(2)),
        key_dim(q.size(3)),
        value_dim(v.size(3)),
        dim_x(xq.size(2)),
        width(w1.size(0)),
        input_dim(w1.size(1)) {}
};

// The per-head products of a tile (dot products q_n.k_m, weighted sums of values and their
// gradients) run as batched products over the heads, on strided views of q, k, v and the
// gradients: [rows, H, D] permuted to [H, rows, D]. Each product has one operand, or its
// result, dense per head (a [H, rows, Nk] buffer), the layouts oneDNN runs fast. (Packing the
// heads on a block diagonal instead costs 8x the arithmetic in zeros: 165 of 1,060 ms per
// reference step in bf16 on one thread.)
// (heads_first, pair_tiles.h).

// rho's inputs for the pairs of a tile, transposed: u^T [H+Dx, rows*Nk] in float32, the H
// scaled dot products (from q already multiplied by 1/sqrt(D_h)) in the first rows, heads first
// as the per-head product writes them, then x_n - x_m. Written into `buffer` [H+Dx, max pairs].
// Differences are formed before any projection, as in the plain path, so that inputs far from
// the origin do not cancel after rounding.
Tensor pair_inputs_transposed(const Tile& tile, const Sizes& s, const Tensor& q_scaled,
                              const Tensor& k, const Tensor& xq, const Tensor& xk,
                              const Tensor& buffer) {
  const int64_t pairs = tile.rows * s.keys;
  const auto u_t = buffer.narrow(1, 0, pairs);
  const auto q_heads = heads_first(q_scaled.select(0, tile.b).narrow(0, tile.q0, tile.rows));
  tile_matmul(u_t.narrow(0, 0, s.heads).view({s.heads, tile.rows, s.keys}), q_heads,
              k.select(0, tile.b).permute({1, 2, 0}));
  auto diff = u_t.narrow(0, s.heads, s.dim_x).view({s.dim_x, tile.rows, s.keys});
  at::sub_out(diff, xq.select(0, tile.b).narrow(0, tile.q0, tile.rows).t().unsqueeze(2),
              xk.select(0, tile.b).t().unsqueeze(1));
  return u_t;
}

class PairwiseKernelAttention : public torch::autograd::Function<PairwiseKernelAttention> {
 public:
  static variable_list forward(AutogradContext* ctx, const Tensor& q, Tensor k, Tensor v, Tensor xq,
                               Tensor xk, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                               const Tensor& b2, const Tensor& w3, const Tensor& b3, bool bf16,
                               bool keep_for_backward) {
    const auto matmul_dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
    const Sizes s(q, v, xq, w1);
    const auto q_scaled = (q / std::sqrt(double(s.key_dim))).contiguous();
    k = k.contiguous();
    v = v.contiguous();
    xq = xq.contiguous();
    xk = xk.contiguous();
    // Transposed once, so that each tile's products are plain row-major x @ W^T.
    const auto w1t = w1.t().to(matmul_dtype).contiguous();
    const auto w2t = w2.t().to(matmul_dtype).contiguous();
    const auto w3m = w3.to(matmul_dtype).contiguous();
    const auto b1m = b1.to(matmul_dtype).contiguous(), b2m = b2.to(matmul_dtype).contiguous();
    // b3, one constant per head added to all of a head's logits, cancels in the softmax over the
    // keys: the weights do not depend on it, and the tiles leave it out.
    (void)b3;

    const auto f32 = q.options();
    const auto mm_options = f32.dtype(matmul_dtype);
    auto attended = torch::empty({s.batch, s.queries, s.heads, s.value_dim}, f32);
    // Heads first, the layout of the products that use the weights.
    auto weights = torch::empty({s.batch, s.heads, s.queries, s.keys}, f32);
    // rho's second activation (after its ReLU) is kept for the backward pass, which recomputes
    // the first from the tile's inputs: a product with K = H + Dx into a buffer that stays in
    // cache costs less than writing the activation to memory here and reading it back twice.
    Tensor hidden2;
    if (keep_for_backward)
      hidden2 = torch::empty({s.batch, s.queries, s.keys, s.width}, mm_options);
    const Tiling tiling(s.batch, s.queries, s.keys, pairs_per_tile(s.width, matmul_dtype));
    const int64_t max_pairs = tiling.rows_per_tile * s.keys;
    // A prediction in float32 (nothing kept) runs rho without products, 16 pairs at a time.
    const bool rho_in_registers = !keep_for_backward && !bf16 &&
                                  pairwise_mlp_tile_forward_applies(s.input_dim, s.width, s.heads);
    pair_tiles::for_each_tile_range(tiling.count, [&](int64_t begin, int64_t end) {
      auto u_buffer = torch::empty({s.input_dim, max_pairs}, f32);
      Tensor scratch1, scratch2;  // the activations; the second only when nothing is kept
      if (!rho_in_registers) scratch1 = torch::empty({max_pairs, s.width}, mm_options);
      if (!rho_in_registers && !keep_for_backward) scratch2 = torch::empty_like(scratch1);
      for (int64_t i = begin; i < end; ++i) {
        const auto tile = tiling[i];
        const int64_t pairs = tile.rows * s.keys;
        const auto u_t =
            pair_inputs_transposed(tile, s, q_scaled, k, xq, xk, u_buffer).to(matmul_dtype);
        auto rows_of = [&](const Tensor& t, int64_t width) {
          return t.select(0, tile.b).narrow(0, tile.q0, tile.rows).view({-1, width});
        };
        // The logits go transposed into the weights' place [H, rows * Nk]; then the softmax
        // over the keys runs in place.
        if (rho_in_registers) {
          pairwise_mlp_tile_forward(w1, b1, w2, b2, w3, Tensor(), u_t, flat_tile(weights, tile));
        } else {
          auto h1 = scratch1.narrow(0, 0, pairs);
          auto h2 = keep_for_backward ? rows_of(hidden2, s.width) : scratch2.narrow(0, 0, pairs);
          tile_matmul(h1, u_t.t(), w1t, {&b1m, true});
          tile_matmul(h2, h1, w2t, {&b2m, true});
          tile_matmul(flat_tile(weights, tile), w3m, h2.t());
        }
        const auto tile_weights = weights.select(0, tile.b).narrow(1, tile.q0, tile.rows);
        softmax_over_keys_(tile_weights);
        tile_matmul(heads_first(attended.select(0, tile.b).narrow(0, tile.q0, tile.rows)),
                    tile_weights, v.select(0, tile.b).permute({1, 0, 2}));
      }
    });
    ctx->saved_data["bf16"] = bf16;
    ctx->save_for_backward({q_scaled, k, v, xq, xk, w1, b1, w2, w3, weights, hidden2});
    return {attended, weights};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const bool bf16 = ctx->saved_data["bf16"].toBool();
    const auto matmul_dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
    const auto saved = ctx->get_saved_variables();
    const auto &q_scaled = saved[0], &k = saved[1], &v = saved[2], &xq = saved[3], &xk = saved[4],
               &weights = saved[9], &hidden2 = saved[10];
    const auto w1 = saved[5].to(matmul_dtype), w2 = saved[7].to(matmul_dtype),
               w3 = saved[8].to(matmul_dtype);
    const auto w1t = w1.t().contiguous(), b1m = saved[6].to(matmul_dtype).contiguous();
    const Sizes s(q_scaled, v, xq, saved[5]);
    Tensor grad_attended, grad_weights_in;  // [B,Nq,H,Dv], [B,H,Nq,Nk]
    if (grads[0].defined()) grad_attended = grads[0].contiguous();
    if (grads[1].defined()) grad_weights_in = grads[1];

    // Gradients summed over tiles get one float32 accumulator per thread.
    const int64_t threads = at::get_num_threads();
    const auto f32 = q_scaled.options();
    auto per_thread = [&](std::vector<int64_t> shape) {
      shape.insert(shape.begin(), threads);
      return torch::zeros(shape, f32);
    };
    // W1's gradient is summed transposed, u^T g1 ([H+Dx, width]): with the narrow side as the
    // rows oneDNN runs the product 1.6x faster in bf16 than g1^T u (one tile on its own, one
    // thread, EPYC; 2.4x in float32 there, though the float32 step did not measurably change).
    auto acc_w1t = per_thread({s.input_dim, s.width}), acc_b1 = per_thread({s.width});
    auto acc_w2 = per_thread({s.width, s.width}), acc_b2 = per_thread({s.width});
    auto acc_w3 = per_thread({s.heads, s.width}), acc_b3 = per_thread({s.heads});
    auto acc_k = per_thread({s.batch, s.keys, s.heads, s.key_dim});
    auto acc_v = per_thread({s.batch, s.keys, s.heads, s.value_dim});
    auto acc_xk = per_thread({s.batch, s.keys, s.dim_x});
    auto grad_q = torch::empty({s.batch, s.queries, s.heads, s.key_dim}, f32);
    auto grad_xq = torch::empty({s.batch, s.queries, s.dim_x}, f32);

    const Tiling tiling(s.batch, s.queries, s.keys, pairs_per_tile(s.width, matmul_dtype));
    const int64_t max_pairs = tiling.rows_per_tile * s.keys;
    pair_tiles::for_each_tile_range(tiling.count, [&](int64_t begin, int64_t end) {
      const int64_t t = at::get_thread_num();
      auto u_buffer = torch::empty({s.input_dim, max_pairs}, f32);
      // The gradients of rho's input, transposed like u: [H+Dx, pairs].
      auto grad_u_buffer = torch::empty({s.input_dim, max_pairs}, f32);
      auto h1_buffer = torch::empty({max_pairs, s.width}, f32.dtype(matmul_dtype));
      auto g1_buffer = torch::empty({max_pairs, s.width}, f32.dtype(matmul_dtype));
      auto g2_buffer = torch::empty({max_pairs, s.width}, f32.dtype(matmul_dtype));
      // Per head [H, rows, Nk]: the gradient of the weights, then of the logits.
      auto grad_weights_buffer = torch::empty({s.heads, max_pairs}, f32);
      auto grad_logits_buffer = torch::empty({s.heads, max_pairs}, f32.dtype(matmul_dtype));
      for (int64_t i = begin; i < end; ++i) {
        const auto tile = tiling[i];
        const int64_t pairs = tile.rows * s.keys;
        auto rows_of = [&](const Tensor& x, int64_t width) {
          return x.select(0, tile.b).narrow(0, tile.q0, tile.rows).view({-1, width});
        };
        auto heads_of = [&](const Tensor& x) {  // [B, Nq, H, D] -> this tile's [H, rows, D]
          return heads_first(x.select(0, tile.b).narrow(0, tile.q0, tile.rows));
        };
        auto heads_rows_keys = [&](const Tensor& buffer) {  // [H, max pairs] -> [H, rows, Nk]
          return buffer.narrow(1, 0, pairs).view({s.heads, tile.rows, s.keys});
        };
        const auto tile_weights = weights.select(0, tile.b).narrow(1, tile.q0, tile.rows);
        const auto v_b = v.select(0, tile.b), k_b = k.select(0, tile.b);  // [Nk, H, D]
        const TileMatmulEpilogue accumulate{nullptr, false, true};
        auto grad_weights = heads_rows_keys(grad_weights_buffer);
        if (grad_attended.defined()) {
          const auto g = heads_of(grad_attended);  // [H, rows, Dv]
          tile_matmul(grad_weights, g, v_b.permute({1, 2, 0}));
          tile_matmul(heads_first(acc_v[t][tile.b]), tile_weights.transpose(1, 2), g, accumulate);
        } else {
          grad_weights.zero_();
        }
        if (grad_weights_in.defined()) {
          grad_weights.add_(grad_weights_in.select(0, tile.b).narrow(1, tile.q0, tile.rows));
        }
        const auto grad_logits = heads_rows_keys(grad_logits_buffer);
        softmax_over_keys_backward(grad_logits, tile_weights, grad_weights, acc_b3[t]);
        const auto gl_t = grad_logits_buffer.narrow(1, 0, pairs);  // [H, pairs]

        const auto u_t =
            pair_inputs_transposed(tile, s, q_scaled, k, xq, xk, u_buffer).to(matmul_dtype);
        const auto grad_u_t = grad_u_buffer.narrow(1, 0, pairs);
        pairwise_mlp_tile_backward({w1, w1t, b1m, w2, w3}, u_t, gl_t, rows_of(hidden2, s.width),
                                   h1_buffer.narrow(0, 0, pairs), g1_buffer.narrow(0, 0, pairs),
                                   g2_buffer.narrow(0, 0, pairs),
                                   {acc_w1t[t], acc_b1[t], acc_w2[t], acc_b2[t], acc_w3[t]},
                                   grad_u_t);

        // Back through the dot products and the differences.
        const auto grad_dots = grad_u_t.narrow(0, 0, s.heads).view({s.heads, tile.rows, s.keys});
        tile_matmul(heads_of(grad_q), grad_dots, k_b.permute({1, 0, 2}));
        tile_matmul(heads_first(acc_k[t][tile.b]), grad_dots.transpose(1, 2), heads_of(q_scaled),
                    accumulate);
        const auto grad_diff =
            grad_u_t.narrow(0, s.heads, s.dim_x).view({s.dim_x, tile.rows, s.keys});
        rows_of(grad_xq, s.dim_x).copy_(grad_diff.sum(2).t());
        acc_xk[t][tile.b].sub_(grad_diff.sum(1).t());
      }
    });
    // q entered as q / sqrt(D_h).
    return {grad_q.div_(std::sqrt(double(s.key_dim))),
            acc_k.sum(0),
            acc_v.sum(0),
            grad_xq,
            acc_xk.sum(0),
            acc_w1t.sum(0).t(),
            acc_b1.sum(0),
            acc_w2.sum(0),
            acc_b2.sum(0),
            acc_w3.sum(0),
            acc_b3.sum(0),
            Tensor(),
            Tensor()};
  }
};

}  // namespace

std::vector<torch::Tensor> pairwise_kernel_attention(
    const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& xq,
    const torch::Tensor& xk, const torch::Tensor& w1, const torch::Tensor& b1,
    const torch::Tensor& w2, const torch::Tensor& b2, const torch::Tensor& w3,
    const torch::Tensor& b3, Precision precision) {
  // Decided here: inside forward() gradient mode is always off, and parameters report
  // requires_grad even under a NoGradGuard, where nothing needs the activations.
  bool keep_for_backward = false;
  if (torch::GradMode::is_enabled()) {
    for (const auto* t : {&q, &k, &v, &xq, &xk, &w1, &b1, &w2, &b2, &w3, &b3}) {
      keep_for_backward = keep_for_backward || t->requires_grad();
    }
  }
  return PairwiseKernelAttention::apply(q, k, v, xq, xk, w1, b1, w2, b2, w3, b3,
                                        precision == Precision::bf16, keep_for_backward);
}

bool pairwise_kernel_attention_applies(const torch::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == torch::kFloat32;
}

}  // namespace npe
