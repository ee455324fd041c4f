#include "pairwise_kernel_attention.h"

#include <algorithm>
#include <cmath>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "npe/models/tile_matmul.h"

namespace npe {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Bytes of one of rho's activations [pairs, width] per tile: a float32 [2048, 128] tile (1 MiB)
// and its neighbours stay in L2, where a 128x128 product runs about 1.5x faster than on a whole
// pair tensor (measured on the 2-core EPYC: 114 vs 77 GFLOP/s on one thread); bfloat16 tiles
// hold twice the pairs (measured: 477 ms per reference step with 4096 pairs, 575 with 2048).
constexpr int64_t kActivationBytesPerTile = int64_t{1} << 20;

int64_t pairs_per_tile(int64_t width, torch::ScalarType dtype) {
  return std::max<int64_t>(1, kActivationBytesPerTile / (width * c10::elementSize(dtype)));
}

// A tile: batch element b, query rows [q0, q0 + rows).
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
Tensor heads_first(const Tensor& rows_heads_dim) {
  return rows_heads_dim.permute({1, 0, 2});  // [rows, H, D] -> [H, rows, D]
}

// rho's input for the pairs of a tile, [rows*Nk, H+Dx] in float32: the scaled dot products
// (from q already multiplied by 1/sqrt(D_h)), then x_n - x_m, written into `buffer`.
// Differences are formed before any projection, as in the plain path, so that inputs far from
// the origin do not cancel after rounding.
Tensor pair_inputs(const Tile& tile, const Sizes& s, const Tensor& q_scaled, const Tensor& k,
                   const Tensor& xq, const Tensor& xk, Tensor& buffer, Tensor& dots_buffer) {
  const auto q_heads = heads_first(q_scaled.select(0, tile.b).narrow(0, tile.q0, tile.rows));
  auto u = buffer.narrow(0, 0, tile.rows * s.keys).view({tile.rows, s.keys, s.input_dim});
  const auto dots = dots_buffer.narrow(1, 0, tile.rows);  // [H, rows, Nk]
  tile_matmul(dots, q_heads, k.select(0, tile.b).permute({1, 2, 0}));
  u.narrow(2, 0, s.heads).copy_(dots.permute({1, 2, 0}));
  auto diff = u.narrow(2, s.heads, s.dim_x);
  at::sub_out(diff, xq.select(0, tile.b).narrow(0, tile.q0, tile.rows).unsqueeze(1),
              xk.select(0, tile.b).unsqueeze(0));
  return u.view({tile.rows * s.keys, s.input_dim});
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
    const auto w3t = w3.t().to(matmul_dtype).contiguous();
    const auto b1m = b1.to(matmul_dtype).contiguous(), b2m = b2.to(matmul_dtype).contiguous(),
               b3m = b3.to(matmul_dtype).contiguous();

    const auto f32 = q.options();
    const auto mm_options = f32.dtype(matmul_dtype);
    auto attended = torch::empty({s.batch, s.queries, s.heads, s.value_dim}, f32);
    auto alpha = torch::empty({s.batch, s.queries, s.keys, s.heads}, f32);
    Tensor hidden1, hidden2;  // rho's activations after each ReLU, for the backward pass
    if (keep_for_backward) {
      hidden1 = torch::empty({s.batch, s.queries, s.keys, s.width}, mm_options);
      hidden2 = torch::empty_like(hidden1);
    }
    const Tiling tiling(s.batch, s.queries, s.keys, pairs_per_tile(s.width, matmul_dtype));
    const int64_t max_pairs = tiling.rows_per_tile * s.keys;
    at::parallel_for(0, tiling.count, 1, [&](int64_t begin, int64_t end) {
      auto u_buffer = torch::empty({max_pairs, s.input_dim}, f32);
      auto dots_buffer = torch::empty({s.heads, tiling.rows_per_tile, s.keys}, f32);
      auto weights_buffer = torch::empty({s.heads, tiling.rows_per_tile, s.keys}, f32);
      auto logits_buffer = torch::empty({max_pairs, s.heads}, f32);
      Tensor scratch1, scratch2;  // this thread's activations when nothing is kept
      if (!keep_for_backward) {
        scratch1 = torch::empty({max_pairs, s.width}, mm_options);
        scratch2 = torch::empty_like(scratch1);
      }
      for (int64_t i = begin; i < end; ++i) {
        const auto tile = tiling[i];
        const int64_t pairs = tile.rows * s.keys;
        const auto u =
            pair_inputs(tile, s, q_scaled, k, xq, xk, u_buffer, dots_buffer).to(matmul_dtype);
        auto rows_of = [&](const Tensor& t, int64_t width) {
          return t.select(0, tile.b).narrow(0, tile.q0, tile.rows).view({-1, width});
        };
        auto h1 = keep_for_backward ? rows_of(hidden1, s.width) : scratch1.narrow(0, 0, pairs);
        auto h2 = keep_for_backward ? rows_of(hidden2, s.width) : scratch2.narrow(0, 0, pairs);
        tile_matmul(h1, u, w1t, {&b1m, true});
        tile_matmul(h2, h1, w2t, {&b2m, true});
        // Logits [pairs, H] = [rows, Nk, H]: softmax over the keys, dimension 1.
        const auto logits = logits_buffer.narrow(0, 0, pairs);
        tile_matmul(logits, h2, w3t, {&b3m});
        auto a = rows_of(alpha, s.keys * s.heads);
        auto a3 = a.view({tile.rows, s.keys, s.heads});
        at::_softmax_out(a3, logits.view({tile.rows, s.keys, s.heads}), 1, false);
        auto weights = weights_buffer.narrow(1, 0, tile.rows);  // [H, rows, Nk]
        weights.copy_(a3.permute({2, 0, 1}));
        tile_matmul(heads_first(attended.select(0, tile.b).narrow(0, tile.q0, tile.rows)), weights,
                    v.select(0, tile.b).permute({1, 0, 2}));
      }
    });
    ctx->saved_data["bf16"] = bf16;
    ctx->save_for_backward({q_scaled, k, v, xq, xk, w1, w2, w3, alpha, hidden1, hidden2});
    return {attended, alpha};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const bool bf16 = ctx->saved_data["bf16"].toBool();
    const auto matmul_dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
    const auto saved = ctx->get_saved_variables();
    const auto &q_scaled = saved[0], &k = saved[1], &v = saved[2], &xq = saved[3], &xk = saved[4],
               &alpha = saved[8], &hidden1 = saved[9], &hidden2 = saved[10];
    const auto w1 = saved[5].to(matmul_dtype), w2 = saved[6].to(matmul_dtype),
               w3 = saved[7].to(matmul_dtype);
    const Sizes s(q_scaled, v, xq, saved[5]);
    Tensor grad_attended, grad_alpha;  // [B,Nq,H,Dv], [B,Nq,Nk,H]
    if (grads[0].defined()) grad_attended = grads[0].contiguous();
    if (grads[1].defined()) grad_alpha = grads[1].contiguous();

    // Gradients summed over tiles get one float32 accumulator per thread.
    const int64_t threads = at::get_num_threads();
    const auto f32 = q_scaled.options();
    auto per_thread = [&](std::vector<int64_t> shape) {
      shape.insert(shape.begin(), threads);
      return torch::zeros(shape, f32);
    };
    auto acc_w1 = per_thread({s.width, s.input_dim}), acc_b1 = per_thread({1, s.width});
    auto acc_w2 = per_thread({s.width, s.width}), acc_b2 = per_thread({1, s.width});
    auto acc_w3 = per_thread({s.heads, s.width}), acc_b3 = per_thread({1, s.heads});
    auto acc_k = per_thread({s.batch, s.keys, s.heads, s.key_dim});
    auto acc_v = per_thread({s.batch, s.keys, s.heads, s.value_dim});
    auto acc_xk = per_thread({s.batch, s.keys, s.dim_x});
    auto grad_q = torch::empty({s.batch, s.queries, s.heads, s.key_dim}, f32);
    auto grad_xq = torch::empty({s.batch, s.queries, s.dim_x}, f32);

    const Tiling tiling(s.batch, s.queries, s.keys, pairs_per_tile(s.width, matmul_dtype));
    const int64_t max_pairs = tiling.rows_per_tile * s.keys;
    at::parallel_for(0, tiling.count, 1, [&](int64_t begin, int64_t end) {
      const int64_t t = at::get_thread_num();
      auto u_buffer = torch::empty({max_pairs, s.input_dim}, f32);
      // Bias gradients as products with a row of ones: faster than column sums here.
      const auto ones = torch::ones({1, max_pairs}, f32);
      const auto ones_mm = ones.to(matmul_dtype);
      auto g1_buffer = torch::empty({max_pairs, s.width}, f32.dtype(matmul_dtype));
      auto gu_buffer = torch::empty({max_pairs, s.input_dim}, f32);
      auto dots_buffer = torch::empty({s.heads, tiling.rows_per_tile, s.keys}, f32);
      auto grad_a_buffer = torch::empty({tiling.rows_per_tile, s.keys * s.heads}, f32);
      auto g2_buffer = torch::empty({max_pairs, s.width}, f32.dtype(matmul_dtype));
      // [H, rows, Nk] per head: the attention weights, then the gradients of the weights and of
      // the dot products.
      auto weights_buffer = torch::empty({s.heads, tiling.rows_per_tile, s.keys}, f32);
      auto per_head_buffer = torch::empty({s.heads, tiling.rows_per_tile, s.keys}, f32);
      for (int64_t i = begin; i < end; ++i) {
        const auto tile = tiling[i];
        const int64_t pairs = tile.rows * s.keys;
        auto rows_of = [&](const Tensor& x, int64_t width) {
          return x.select(0, tile.b).narrow(0, tile.q0, tile.rows).view({-1, width});
        };
        auto heads_of = [&](const Tensor& x) {  // [B, Nq, H, D] -> this tile's [H, rows, D]
          return heads_first(x.select(0, tile.b).narrow(0, tile.q0, tile.rows));
        };
        const auto a = rows_of(alpha, s.keys * s.heads);                  // [rows, Nk*H]
        const auto v_b = v.select(0, tile.b), k_b = k.select(0, tile.b);  // [Nk, H, D]
        const TileMatmulEpilogue accumulate{nullptr, false, true};
        Tensor grad_a;
        if (grad_attended.defined()) {
          const auto g = heads_of(grad_attended);                 // [H, rows, Dv]
          auto weights = weights_buffer.narrow(1, 0, tile.rows);  // [H, rows, Nk]
          weights.copy_(a.view({tile.rows, s.keys, s.heads}).permute({2, 0, 1}));
          auto grad_weights = per_head_buffer.narrow(1, 0, tile.rows);
          tile_matmul(grad_weights, g, v_b.permute({1, 2, 0}));
          grad_a = grad_a_buffer.narrow(0, 0, tile.rows);
          grad_a.view({tile.rows, s.keys, s.heads}).copy_(grad_weights.permute({1, 2, 0}));
          tile_matmul(heads_first(acc_v[t][tile.b]), weights.transpose(1, 2), g, accumulate);
        } else {
          grad_a = torch::zeros_like(a);
        }
        if (grad_alpha.defined()) grad_a.add_(rows_of(grad_alpha, s.keys * s.heads));
        const auto view3 = std::vector<int64_t>{tile.rows, s.keys, s.heads};
        const auto gl =
            at::_softmax_backward_data(grad_a.view(view3), a.view(view3), 1, torch::kFloat32)
                .view({pairs, s.heads});
        tile_matmul(acc_b3[t], ones.narrow(1, 0, pairs), gl, {nullptr, false, true});
        const auto glm = gl.to(matmul_dtype);

        const auto u =
            pair_inputs(tile, s, q_scaled, k, xq, xk, u_buffer, dots_buffer).to(matmul_dtype);
        const auto h1 = rows_of(hidden1, s.width), h2 = rows_of(hidden2, s.width);
        const auto ones_p = ones_mm.narrow(1, 0, pairs);
        tile_matmul(acc_w3[t], glm.t(), h2, accumulate);
        auto g2 = g2_buffer.narrow(0, 0, pairs);
        tile_matmul(g2, glm, w3);
        at::threshold_backward_out(g2, g2, h2, 0);
        tile_matmul(acc_w2[t], g2.t(), h1, accumulate);
        tile_matmul(acc_b2[t], ones_p, g2, accumulate);
        auto g1 = g1_buffer.narrow(0, 0, pairs);
        tile_matmul(g1, g2, w2);
        at::threshold_backward_out(g1, g1, h1, 0);
        tile_matmul(acc_w1[t], g1.t(), u, accumulate);
        tile_matmul(acc_b1[t], ones_p, g1, accumulate);
        auto gu_rows = gu_buffer.narrow(0, 0, pairs);
        tile_matmul(gu_rows, g1, w1);
        const auto gu = gu_rows.view({tile.rows, s.keys, -1});

        // Back through the dot products and the differences.
        auto grad_dots = per_head_buffer.narrow(1, 0, tile.rows);  // [H, rows, Nk]
        grad_dots.copy_(gu.narrow(2, 0, s.heads).permute({2, 0, 1}));
        tile_matmul(heads_of(grad_q), grad_dots, k_b.permute({1, 0, 2}));
        tile_matmul(heads_first(acc_k[t][tile.b]), grad_dots.transpose(1, 2), heads_of(q_scaled),
                    accumulate);
        const auto grad_diff = gu.narrow(2, s.heads, s.dim_x);
        rows_of(grad_xq, s.dim_x).copy_(grad_diff.sum(1));
        acc_xk[t][tile.b].sub_(grad_diff.sum(0));
      }
    });
    // q entered as q / sqrt(D_h).
    return {grad_q.div_(std::sqrt(double(s.key_dim))),
            acc_k.sum(0),
            acc_v.sum(0),
            grad_xq,
            acc_xk.sum(0),
            acc_w1.sum(0),
            acc_b1.sum(0).squeeze(0),
            acc_w2.sum(0),
            acc_b2.sum(0).squeeze(0),
            acc_w3.sum(0),
            acc_b3.sum(0).squeeze(0),
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
