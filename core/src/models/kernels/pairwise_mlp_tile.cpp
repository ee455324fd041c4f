#include "pairwise_mlp_tile.h"

#include <torch/torch.h>

#include "attention_tile_passes.h"
#include "npe/models/tile_matmul.h"

namespace npe {

void pairwise_mlp_tile_backward(const PairwiseMlpWeights& weights, const torch::Tensor& in_t,
                                const torch::Tensor& grad_out_t, const torch::Tensor& h2,
                                const torch::Tensor& h1, const torch::Tensor& g1,
                                const torch::Tensor& g2, const PairwiseMlpGradientSums& sums,
                                const torch::Tensor& grad_in_t) {
  const TileMatmulEpilogue accumulate{nullptr, false, true};
  // The first activation, recomputed into a buffer that stays in cache: cheaper than keeping it
  // in memory and reading it back twice.
  tile_matmul(h1, in_t.t(), weights.w1t, {&weights.b1, true});
  tile_matmul(g2, grad_out_t.t(), weights.w3);
  // The pass streams the kept activation h2 in from memory; W3's gradient after it finds h2 in
  // cache (the other order ran that product at half its rate).
  relu_backward_with_bias_gradient(g2, h2, sums.b2);
  tile_matmul(sums.w3, grad_out_t, h2, accumulate);
  tile_matmul(sums.w2, g2.t(), h1, accumulate);
  tile_matmul(g1, g2, weights.w2);
  relu_backward_with_bias_gradient(g1, h1, sums.b1);
  tile_matmul(sums.w1t, in_t, g1, accumulate);
  tile_matmul(grad_in_t, weights.w1.t(), g1.t());
}

}  // namespace npe
