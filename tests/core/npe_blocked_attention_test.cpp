// The blocked TE attention (query blocks recomputed in the backward pass) against the plain
// path it must equal: values and every gradient at float64, whole models included, and the
// fused kernel inside the blocks at float32.

#include <sstream>

#include <gtest/gtest.h>

#include <torch/torch.h>

#include "models/kernels/blocked_queries.h"
#include "npe/models/compute_settings.h"
#include "npe/models/model_registry.h"
#include "npe/models/modules.h"
#include "test_support.h"

namespace npe {
namespace {

// Restores the process-wide settings a test changes.
struct BlockSettingsGuard {
  AttentionImplementation implementation = attention_implementation();
  Precision precision = pairwise_precision();
  ~BlockSettingsGuard() {
    set_attention_implementation(implementation);
    set_pairwise_precision(precision);
    set_attention_block_bytes(0);
  }
};

TEST(QueryBlocks, CoverEveryRowOnceWithinTheBudget) {
  // Rows of 100 bytes: a budget of 2,500 takes 25 rows, a block of one batch element's queries
  // at a time in ranges; 25,000 takes whole batch elements, 3 of 80 rows at a time; a budget
  // below one row still makes progress, one row per block.
  for (const auto& [budget, expected_blocks] :
       std::vector<std::pair<int64_t, size_t>>{{2500, 5 * 4}, {25000, 2}, {10, 5 * 80}}) {
    const auto blocks = plan_query_blocks(5, 80, 100, budget);
    EXPECT_EQ(blocks.size(), expected_blocks) << "budget " << budget;
    auto covered = torch::zeros({5, 80}, torch::kInt32);
    for (const auto& b : blocks) {
      EXPECT_LE((b.batch_end - b.batch_begin) * (b.query_end - b.query_begin) * 100,
                std::max<int64_t>(budget, 100));
      covered.slice(0, b.batch_begin, b.batch_end).slice(1, b.query_begin, b.query_end) += 1;
    }
    EXPECT_TRUE(torch::equal(covered, torch::ones_like(covered))) << "budget " << budget;
  }
  EXPECT_TRUE(plan_query_blocks(3, 0, 100, 1000).empty());
}

struct BlockedLayer {
  int64_t batch, queries, keys, dim_x, frequencies;
  bool update_locations;
  int64_t block_bytes;  // the budget: from one row per block to whole batch elements
};

void PrintTo(const BlockedLayer& s, std::ostream* out) {
  *out << "batch" << s.batch << "_q" << s.queries << "_k" << s.keys << "_dx" << s.dim_x << "_f"
       << s.frequencies << (s.update_locations ? "_moving" : "_fixed") << "_budget"
       << s.block_bytes;
}

// One TE attention layer's outputs and the gradients of a fixed function of them (weights
// included) with respect to inputs and parameters.
std::vector<torch::Tensor> run_te_layer(const BlockedLayer& s,
                                        AttentionImplementation implementation,
                                        torch::ScalarType dtype) {
  set_attention_implementation(implementation);
  set_attention_block_bytes(s.block_bytes);
  torch::manual_seed(3);
  TeMultiHeadAttention layer(16, 4, 4, s.dim_x, 24, s.frequencies, s.update_locations);
  layer->to(dtype);
  auto zq = torch::randn({s.batch, s.queries, 16}).to(dtype).requires_grad_();
  auto xq = (3.0 * torch::randn({s.batch, s.queries, s.dim_x})).to(dtype).requires_grad_();
  auto zk = torch::randn({s.batch, s.keys, 16}).to(dtype).requires_grad_();
  auto xk = (3.0 * torch::randn({s.batch, s.keys, s.dim_x})).to(dtype).requires_grad_();
  auto out = layer->forward(zq, xq, zk, xk, /*return_weights=*/true);
  auto loss = (out.z * torch::linspace(-1, 1, 16).to(dtype)).sum() + out.x.pow(2).sum() +
              (out.weights * torch::rand(out.weights.sizes()).to(dtype)).sum();
  loss.backward();
  std::vector<torch::Tensor> r{out.z.detach(), out.x.detach(), out.weights.detach(),
                               zq.grad(),      xq.grad(),      zk.grad(),
                               xk.grad()};
  for (const auto& p : layer->parameters()) r.push_back(p.grad());
  return r;
}

double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).norm().item<double>() / std::max(1.0, b.norm().item<double>());
}

class BlockedAttention : public ::testing::TestWithParam<BlockedLayer> {};

// At float64 both paths run the same operations on the same pairs; only sums over blocks (key
// and parameter gradients) are taken in another order: differences at float64 rounding.
TEST_P(BlockedAttention, EqualsThePlainPathInValuesAndGradientsAtFloat64) {
  BlockSettingsGuard guard;
  const auto plain = run_te_layer(GetParam(), AttentionImplementation::plain, torch::kFloat64);
  const auto blocked = run_te_layer(GetParam(), AttentionImplementation::blocked, torch::kFloat64);
  ASSERT_EQ(plain.size(), blocked.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    ASSERT_EQ(plain[i].defined(), blocked[i].defined()) << "tensor " << i;
    if (!plain[i].defined()) continue;
    EXPECT_LT(relative_error(blocked[i], plain[i]), 1e-12) << "tensor " << i;
  }
}

// Inside the blocks the fused kernel runs (CPU, float32): every value and gradient against
// float64, to the budget the fused kernel's own test uses (npe_pairwise_attention_test.cpp:
// gradients are compared with float64, not with another float32 summation order).
TEST_P(BlockedAttention, FusedInsideTheBlocksMatchesFloat64) {
  if (GetParam().frequencies > 0) GTEST_SKIP() << "the fused kernel takes no Fourier features";
  BlockSettingsGuard guard;
  set_pairwise_precision(Precision::fp32);
  const auto exact = run_te_layer(GetParam(), AttentionImplementation::plain, torch::kFloat64);
  const auto blocked = run_te_layer(GetParam(), AttentionImplementation::blocked, torch::kFloat32);
  for (size_t i = 0; i < exact.size(); ++i) {
    if (!exact[i].defined()) continue;
    EXPECT_LT(relative_error(blocked[i].to(torch::kFloat64), exact[i]), 1e-5) << "tensor " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Layers, BlockedAttention,
                         ::testing::Values(BlockedLayer{3, 37, 11, 1, 0, true, 1},
                                           BlockedLayer{3, 37, 11, 2, 0, true, 100000},
                                           BlockedLayer{3, 37, 11, 2, 3, false, 3000000},
                                           BlockedLayer{2, 5, 300, 1, 0, false, 1},
                                           BlockedLayer{2, 40, 33, 2, 2, true, 200000}),
                         [](const auto& info) {
                           std::ostringstream name;
                           PrintTo(info.param, &name);
                           return name.str();
                         });

// Whole models whose TE attentions take every role (self-attention over the context, targets
// from context, pseudo-tokens both ways, the target self-attention of TE-TNP-ND): likelihood and
// every parameter gradient equal at float64, with blocks of one query row.
TEST(BlockedAttentionModels, LikelihoodAndGradientsEqualThePlainPathAtFloat64) {
  BlockSettingsGuard guard;
  for (const std::string kind : {"tetnp", "tepttnp", "tetnpnd"}) {
    SCOPED_TRACE(kind);
    torch::manual_seed(5);
    const auto config = testing::tiny_config(kind, 2);
    const auto task = testing::random_task(3, 9, 13, 2).to(torch::kCPU, torch::kFloat64);
    auto run = [&](AttentionImplementation implementation) {
      set_attention_implementation(implementation);
      set_attention_block_bytes(1);
      torch::manual_seed(0);
      auto model = make_model(config);
      model->to(torch::kFloat64);
      auto ll = model->log_likelihood(task).mean();
      ll.backward();
      std::vector<torch::Tensor> out{ll.detach()};
      for (const auto& p : model->parameters()) out.push_back(p.grad());
      return out;
    };
    const auto plain = run(AttentionImplementation::plain);
    const auto blocked = run(AttentionImplementation::blocked);
    ASSERT_EQ(plain.size(), blocked.size());
    for (size_t i = 0; i < plain.size(); ++i) {
      ASSERT_EQ(plain[i].defined(), blocked[i].defined()) << "tensor " << i;
      if (plain[i].defined()) {
        EXPECT_LT(relative_error(blocked[i], plain[i]), 1e-11) << "tensor " << i;
      }
    }
  }
}

TEST(BlockedAttentionSettings, NamesRoundTripAndTheBudgetComesFromTheMemory) {
  BlockSettingsGuard guard;
  for (const auto* name : {"auto", "fused", "plain", "blocked"}) {
    EXPECT_EQ(attention_implementation_name(parse_attention_implementation(name)), name);
  }
  NPE_EXPECT_THROW_WITH(parse_attention_implementation("tiled"), ConfigError, "known: auto");
  set_attention_block_bytes(0);
  const auto chosen = attention_block_bytes(/*cuda=*/false);
  EXPECT_GE(chosen, int64_t{64} << 20);
  EXPECT_LE(chosen, int64_t{2048} << 20);
  set_attention_block_bytes(12345);
  EXPECT_EQ(attention_block_bytes(false), 12345);
  EXPECT_EQ(attention_block_bytes(true), 12345);
}

}  // namespace
}  // namespace npe
