// The attention kernels' tile product (oneDNN where the build has it) against libtorch's plain
// products, for every epilogue, operand layout and dtype the kernels use, batched per head too.

#include <optional>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/kernels/guarded_operands.h"
#include "npe/guard_page_allocator.h"
#include "npe/models/auto_precision.h"
#include "npe/models/compute_settings.h"
#include "npe/models/tile_matmul.h"

namespace npe {
namespace {

struct Case {
  int64_t m, k, n;
  bool transpose_a, transpose_b;
  torch::ScalarType operands, out;
};

std::string describe(const Case& c) {
  auto dtype = [](torch::ScalarType t) { return t == torch::kBFloat16 ? "bf16" : "f32"; };
  return std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) +
         (c.transpose_a ? "_aT" : "") + (c.transpose_b ? "_bT" : "") + "_" + dtype(c.operands) +
         "_to_" + dtype(c.out);
}

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  return describe(info.param);
}

// How GoogleTest (and so ctest's test names) show a case; without it they would show its bytes,
// padding included, which differ from run to run.
void PrintTo(const Case& c, std::ostream* out) {
  *out << describe(c);
}

// An operand [rows, cols] stored either row-major or as the transpose of a [cols, rows] tensor.
torch::Tensor operand(int64_t rows, int64_t cols, bool transposed, torch::ScalarType dtype) {
  return transposed ? torch::randn({cols, rows}).to(dtype).t()
                    : torch::randn({rows, cols}).to(dtype);
}

class TileMatmul : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    if (GetParam().operands == torch::kBFloat16 && !bf16_unavailable_reason().empty()) {
      GTEST_SKIP() << bf16_unavailable_reason();
    }
  }
  // Relative to the size of the result; float32 products agree to rounding, bfloat16 ones
  // (float32 accumulation on both sides, different order) to a little more.
  double tolerance() const { return GetParam().operands == torch::kBFloat16 ? 1e-2 : 1e-5; }
  void expect_close(const torch::Tensor& actual, const torch::Tensor& expected) const {
    const auto scale = expected.abs().max().item<double>() + 1.0;
    const auto error = (actual.to(torch::kFloat64) - expected).abs().max().item<double>();
    EXPECT_LE(error, tolerance() * scale) << "max error " << error << " at scale " << scale;
  }
  // A dense [m, n] output inside a buffer with a row of canaries before and after it: a kernel
  // that writes past its output corrupts whatever the allocator put there (in a long run, the
  // heap's own bookkeeping), so the canaries must survive every product.
  torch::Tensor guarded_output(torch::ScalarType dtype) {
    const auto& c = GetParam();
    m_guarded = torch::full({(c.m + 2) * c.n}, kCanary, torch::dtype(dtype));
    return m_guarded.narrow(0, c.n, c.m * c.n).view({c.m, c.n});
  }
  void expect_canaries_intact() const {
    const auto n = GetParam().n;
    const auto before = m_guarded.narrow(0, 0, n);
    const auto after = m_guarded.narrow(0, m_guarded.size(0) - n, n);
    EXPECT_TRUE(before.eq(kCanary).all().item<bool>()) << "written before the output";
    EXPECT_TRUE(after.eq(kCanary).all().item<bool>()) << "written past the output";
  }

 private:
  static constexpr double kCanary = 99.0;
  torch::Tensor m_guarded;
};

TEST_P(TileMatmul, PlainProductBiasAndReluMatchLibtorch) {
  const auto& c = GetParam();
  const auto a = operand(c.m, c.k, c.transpose_a, c.operands);
  const auto b = operand(c.k, c.n, c.transpose_b, c.operands);
  const auto bias = torch::randn({c.n}).to(c.operands);
  const auto exact = at::mm(a.to(torch::kFloat64), b.to(torch::kFloat64));

  auto out = guarded_output(c.out);  // holds 99s: overwritten, not added to
  tile_matmul(out, a, b);
  expect_close(out, exact);

  tile_matmul(out, a, b, {&bias, false});
  expect_close(out, exact + bias.to(torch::kFloat64));

  tile_matmul(out, a, b, {&bias, true});
  expect_close(out, (exact + bias.to(torch::kFloat64)).relu());
  EXPECT_GE(out.min().item<double>(), 0.0);
  expect_canaries_intact();
}

TEST_P(TileMatmul, AccumulatesIntoTheOutput) {
  const auto& c = GetParam();
  const auto a = operand(c.m, c.k, c.transpose_a, c.operands);
  const auto b = operand(c.k, c.n, c.transpose_b, c.operands);
  const auto start = torch::randn({c.m, c.n}).to(c.out);
  auto out = guarded_output(c.out);
  out.copy_(start);
  const TileMatmulEpilogue accumulate{nullptr, false, true};
  tile_matmul(out, a, b, accumulate);
  tile_matmul(out, a, b, accumulate);
  expect_close(
      out, start.to(torch::kFloat64) + 2 * at::mm(a.to(torch::kFloat64), b.to(torch::kFloat64)));
  expect_canaries_intact();
}

// The kernels' shapes: rho's layers on a tile ([pairs, 9] -> 128 -> 128 -> 8, pairs not a
// multiple of any block size), weight gradients (transposed activations, pairs as the inner
// dimension), bias gradients (a row of ones), and mixed bfloat16 operands with float32 results.
INSTANTIATE_TEST_SUITE_P(
    Shapes, TileMatmul,
    ::testing::Values(Case{2048, 9, 128, false, false, torch::kFloat32, torch::kFloat32},
                      Case{1000, 128, 128, false, true, torch::kFloat32, torch::kFloat32},
                      Case{77, 128, 8, false, false, torch::kFloat32, torch::kFloat32},
                      Case{128, 1000, 128, true, false, torch::kFloat32, torch::kFloat32},
                      Case{1, 333, 128, false, false, torch::kFloat32, torch::kFloat32},
                      Case{4096, 128, 128, false, true, torch::kBFloat16, torch::kBFloat16},
                      Case{513, 128, 8, false, false, torch::kBFloat16, torch::kFloat32},
                      Case{8, 700, 128, true, false, torch::kBFloat16, torch::kFloat32},
                      Case{1, 700, 128, false, false, torch::kBFloat16, torch::kFloat32},
                      Case{300, 128, 9, false, false, torch::kBFloat16, torch::kFloat32}),
    name_of);

// Batched per-head products on strided views, in the layouts of the attention kernel: heads of
// [rows, H, D] tensors permuted to the front, into a dense [H, rows, keys] buffer, from it into
// interleaved rows, and from its transpose accumulated into interleaved rows.
TEST(TileMatmulBatched, PerHeadProductsOfStridedViewsMatchLibtorch) {
  torch::manual_seed(11);
  const int64_t heads = 8, rows = 37, keys = 50, dim = 16;
  for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    if (dtype == torch::kBFloat16 && !bf16_unavailable_reason().empty()) continue;
    const double tolerance = dtype == torch::kBFloat16 ? 1e-2 : 1e-5;
    auto expect_close = [&](const torch::Tensor& actual, const torch::Tensor& expected) {
      const auto scale = expected.abs().max().item<double>() + 1.0;
      const auto error = (actual.to(torch::kFloat64) - expected).abs().max().item<double>();
      EXPECT_LE(error, tolerance * scale) << "max error " << error << " at scale " << scale;
    };
    const auto q = torch::randn({rows, heads, dim}).to(dtype);  // [rows, H, D]
    const auto k = torch::randn({keys, heads, dim}).to(dtype);  // [keys, H, D]
    auto exact = [](const torch::Tensor& a, const torch::Tensor& b) {
      return at::bmm(a.to(torch::kFloat64), b.to(torch::kFloat64));
    };
    // Dot products per head: [H, rows, D] @ [H, D, keys] into a dense buffer.
    const auto dots_buffer = torch::full({heads, rows + 3, keys}, 99.0);
    auto dots = dots_buffer.narrow(1, 0, rows);
    tile_matmul(dots, q.permute({1, 0, 2}), k.permute({1, 2, 0}));
    expect_close(dots, exact(q.permute({1, 0, 2}), k.permute({1, 2, 0})));
    // The rows between the heads' blocks are not the output's: nothing writes there.
    EXPECT_TRUE(dots_buffer.narrow(1, rows, 3).eq(99.0).all().item<bool>());
    // Weighted sums per head into the rows of a [rows, H, D] tensor.
    const auto weights = torch::randn({heads, rows, keys}).to(dtype);
    auto out = torch::zeros({rows, heads, dim});
    tile_matmul(out.permute({1, 0, 2}), weights, k.permute({1, 0, 2}));
    expect_close(out.permute({1, 0, 2}), exact(weights, k.permute({1, 0, 2})));
    // Gradients per key, accumulated into [keys, H, D] from the transposed weights.
    const auto start = torch::randn({keys, heads, dim});
    auto acc = start.clone();
    tile_matmul(acc.permute({1, 0, 2}), weights.transpose(1, 2), q.permute({1, 0, 2}),
                {nullptr, false, true});
    expect_close(acc.permute({1, 0, 2}), start.permute({1, 0, 2}).to(torch::kFloat64) +
                                             exact(weights.transpose(1, 2), q.permute({1, 0, 2})));
  }
  auto out = torch::empty({2, 4, 5});
  EXPECT_THROW(tile_matmul(out, torch::randn({2, 4, 3}), torch::randn({3, 3, 5})), c10::Error);
  const auto bias = torch::randn({5});
  EXPECT_THROW(tile_matmul(out, torch::randn({2, 4, 3}), torch::randn({2, 3, 5}), {&bias, false}),
               c10::Error);
}

TEST(TileMatmulArguments, RefusesMismatchedShapesAndDtypes) {
  auto out = torch::empty({4, 5});
  EXPECT_THROW(tile_matmul(out, torch::randn({4, 3}), torch::randn({2, 5})), c10::Error);
  EXPECT_THROW(tile_matmul(out, torch::randn({4, 3}), torch::randn({3, 5}).to(torch::kBFloat16)),
               c10::Error);
  const auto wrong_bias = torch::randn({4});
  EXPECT_THROW(tile_matmul(out, torch::randn({4, 3}), torch::randn({3, 5}), {&wrong_bias, false}),
               c10::Error);
}

// The guarded copies that NPE_TILE_MATMUL_GUARD runs every product on: a write beside a view,
// or into a hole of a strided one, is found and placed; writes to the view's elements are not.
TEST(GuardedOperand, FindsWritesOutsideTheViewAndNothingElse) {
  const auto whole = torch::arange(4 * 10, torch::kFloat32).view({4, 10});
  const auto strided = whole.narrow(1, 0, 6).t();  // [6, 4], strides (1, 10): holes between rows
  EXPECT_EQ(strided_extent_bytes(strided), (3 * 10 + 5 + 1) * 4);
  {
    const GuardedOperand guarded(strided);
    EXPECT_TRUE(torch::equal(guarded.view(), strided));
    guarded.view().mul_(2.0);
    EXPECT_EQ(guarded.find_stray_write(true), "");
    EXPECT_NE(guarded.find_stray_write(false), "") << "an input changed";
  }
  {
    const GuardedOperand guarded(strided);
    guarded.view().data_ptr<float>()[3 * 10 + 5 + 1] = 1.0f;  // just past the last element
    const auto problem = guarded.find_stray_write(true);
    EXPECT_NE(problem.find("0 bytes past the view's end"), std::string::npos) << problem;
  }
  {
    const GuardedOperand guarded(strided);
    guarded.view().data_ptr<float>()[7] = 1.0f;  // row 0, column 7: not one of the view's
    const auto problem = guarded.find_stray_write(true);
    EXPECT_NE(problem.find("in a hole of the view, 28 bytes from its start"), std::string::npos)
        << problem;
  }
  {
    const GuardedOperand guarded(strided);
    (guarded.view().data_ptr<float>() - 2)[0] = 1.0f;
    const auto problem = guarded.find_stray_write(true);
    EXPECT_NE(problem.find("8 bytes before the view"), std::string::npos) << problem;
  }
  // bfloat16, and an odd misalignment kept: the kernel sees the layout it would have seen. (Not
  // where the suite runs under the guard-page allocator, whose storage is not 64-byte aligned.)
  const auto bf16 = torch::randn({101}).to(torch::kBFloat16).narrow(0, 3, 97);
  const GuardedOperand guarded(bf16);
  if (npe::describe_guard_page_allocator().empty()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(guarded.view().data_ptr()) % 64,
              reinterpret_cast<uintptr_t>(bf16.data_ptr()) % 64);
  }
  EXPECT_TRUE(torch::equal(guarded.view(), bf16));
}

// Every layout of the kernels' products, on guarded copies: nothing but the output changes.
TEST(GuardedOperand, TileProductsWriteOnlyTheirOutput) {
  torch::manual_seed(3);
  for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    if (dtype == torch::kBFloat16 && !bf16_unavailable_reason().empty()) continue;
    const int64_t heads = 4, rows = 23, keys = 59, dim = 16, width = 32;
    const auto q = torch::randn({rows, heads, dim}).to(dtype);
    const auto k = torch::randn({keys, heads, dim}).to(dtype);
    const auto buffer = torch::zeros({heads, 8142});  // [H, max pairs], a part used
    const auto dots = buffer.narrow(1, 0, rows * keys).view({heads, rows, keys});
    const auto bias = torch::randn({width}).to(dtype);
    const auto u_t = torch::randn({heads + 2, 8142}).to(dtype).narrow(1, 0, rows * keys);
    const auto w1t = torch::randn({heads + 2, width}).to(dtype);
    const auto h1 = torch::empty({8142, width}, dtype).narrow(0, 0, rows * keys);
    struct Product {
      torch::Tensor out, a, b;
      TileMatmulEpilogue epilogue;
    };
    const std::vector<Product> products{
        {dots, q.permute({1, 0, 2}), k.permute({1, 2, 0}), {}},
        {h1, u_t.t(), w1t, {&bias, true}},
        {torch::zeros({heads + 2, width}), u_t, h1, {nullptr, false, true}},
        {torch::zeros({rows, heads, dim}).permute({1, 0, 2}),
         dots.to(dtype),
         k.permute({1, 0, 2}),
         {}},
    };
    for (const auto& p : products) {
      const GuardedOperand out(p.out), a(p.a), b(p.b);
      std::optional<GuardedOperand> guarded_bias;
      auto epilogue = p.epilogue;
      if (epilogue.bias) epilogue.bias = &guarded_bias.emplace(*epilogue.bias).view();
      tile_matmul(out.view(), a.view(), b.view(), epilogue);
      EXPECT_EQ(out.find_stray_write(true), "") << p.out.sizes() << " = " << p.a.sizes();
      EXPECT_EQ(a.find_stray_write(false), "");
      EXPECT_EQ(b.find_stray_write(false), "");
      if (guarded_bias) {
        EXPECT_EQ(guarded_bias->find_stray_write(false), "");
      }
    }
  }
}

}  // namespace
}  // namespace npe
