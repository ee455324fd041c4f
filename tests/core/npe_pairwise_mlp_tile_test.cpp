// The pairwise MLP's forward pass over a tile of pairs
// (core/src/models/kernels/pairwise_mlp_tile.h) against the libtorch composition it replaces: pair
// counts that are not multiples of the 16 pairs it computes at once, strided rows as the TE kernels
// pass them, widths that are not multiples of the 8 units it computes at once, with and without the
// last bias.

#include <gtest/gtest.h>

#include <torch/torch.h>

#include "models/kernels/pairwise_mlp_tile.h"

namespace npe {
namespace {

struct MlpShape {
  int64_t inputs, width, outputs, pairs;
};

class PairwiseMlpTileForward : public ::testing::TestWithParam<MlpShape> {};

TEST_P(PairwiseMlpTileForward, EqualsLibtorchOnStridedRows) {
  const auto s = GetParam();
  torch::manual_seed(s.pairs);
  const auto w1 = torch::randn({s.width, s.inputs}), b1 = torch::randn({s.width});
  const auto w2 = torch::randn({s.width, s.width}) / 4, b2 = torch::randn({s.width});
  const auto w3 = torch::randn({s.outputs, s.width}), b3 = torch::randn({s.outputs});
  // Rows of a wider buffer, as the kernels' tiles: the row stride is not the pair count.
  const auto in_t = torch::randn({s.inputs, s.pairs + 5}).narrow(1, 2, s.pairs);
  const auto hidden = torch::relu(torch::relu(in_t.t().matmul(w1.t()) + b1).matmul(w2.t()) + b2);
  const auto expected = hidden.matmul(w3.t()).t();  // [O, pairs]
  for (const bool with_b3 : {false, true}) {
    auto buffer = torch::full({s.outputs, s.pairs + 7}, 1234.0f);
    const auto out_t = buffer.narrow(1, 3, s.pairs);
    pairwise_mlp_tile_forward(w1, b1, w2, b2, w3, with_b3 ? b3 : torch::Tensor(), in_t, out_t);
    const auto want = with_b3 ? expected + b3.unsqueeze(1) : expected;
    // Sums of at most 64 terms in another order than libtorch's: float32 rounding. Measured
    // (2026-12-06, Xeon; OPENBLAS_CORETYPE Haswell and SkylakeX, 1 and 2 threads): at most
    // 3.4e-7 of the largest output; 1e-4 leaves room for other CPUs' summation orders.
    EXPECT_LT((out_t - want).abs().max().item<double>(),
              1e-4 * std::max(1.0, want.abs().max().item<double>()))
        << "b3 " << with_b3;
    // Nothing is written outside the tile's pairs (a ragged last step computes 16 lanes).
    EXPECT_TRUE(torch::all(buffer.narrow(1, 0, 3) == 1234.0f).item<bool>());
    EXPECT_TRUE(torch::all(buffer.narrow(1, 3 + s.pairs, 4) == 1234.0f).item<bool>());
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PairwiseMlpTileForward,
                         ::testing::Values(MlpShape{10, 16, 8, 1}, MlpShape{10, 16, 8, 16},
                                           MlpShape{10, 16, 8, 33}, MlpShape{8, 16, 1, 250},
                                           MlpShape{6, 48, 4, 37}, MlpShape{3, 13, 5, 17},
                                           MlpShape{64, 64, 64, 20}),
                         [](const auto& info) {
                           const auto& s = info.param;
                           return "in" + std::to_string(s.inputs) + "_width" +
                                  std::to_string(s.width) + "_out" + std::to_string(s.outputs) +
                                  "_pairs" + std::to_string(s.pairs);
                         });

TEST(PairwiseMlpTileForward, NoPairsWritesNothingAndWrongLayoutsAreRefused) {
  const auto w1 = torch::randn({16, 10}), b1 = torch::randn({16}), w2 = torch::randn({16, 16}),
             b2 = torch::randn({16}), w3 = torch::randn({8, 16});
  pairwise_mlp_tile_forward(w1, b1, w2, b2, w3, {}, torch::zeros({10, 0}), torch::zeros({8, 0}));
  // Pairs along the rows instead of the columns, the wrong input count, float64, too wide.
  EXPECT_THROW(pairwise_mlp_tile_forward(w1, b1, w2, b2, w3, {}, torch::zeros({20, 10}).t(),
                                         torch::zeros({8, 20})),
               c10::Error);
  EXPECT_THROW(pairwise_mlp_tile_forward(w1, b1, w2, b2, w3, {}, torch::zeros({9, 20}),
                                         torch::zeros({8, 20})),
               c10::Error);
  EXPECT_THROW(
      pairwise_mlp_tile_forward(w1, b1, w2, b2, w3, {}, torch::zeros({10, 20}, torch::kFloat64),
                                torch::zeros({8, 20})),
      c10::Error);
  EXPECT_FALSE(pairwise_mlp_tile_forward_applies(10, 65, 8));
  EXPECT_THROW(
      pairwise_mlp_tile_forward(torch::randn({65, 10}), torch::randn({65}), torch::randn({65, 65}),
                                torch::randn({65}), torch::randn({8, 65}), {},
                                torch::zeros({10, 20}), torch::zeros({8, 20})),
      c10::Error);
}

}  // namespace
}  // namespace npe
