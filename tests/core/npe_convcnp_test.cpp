// ConvCNP: translation equivariance by construction (1-D off-grid and 2-D on-grid), and the
// clear error for inputs that would need too large a grid.

#include "npe/errors.h"
#include "npe/models/grid_predictor.h"
#include "npe/models/model_registry.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::max_abs_diff;
using testing::random_task;
using testing::tiny_config;

double relative_change(NeuralProcessImpl& model, const Task& task, double shift) {
  torch::NoGradGuard no_grad;
  auto a = model.predict(task);
  auto b = model.predict(task.translated({shift}));
  const double scale = std::max(1.0, a.mean.abs().max().item<double>());
  return std::max(max_abs_diff(a.mean, b.mean), max_abs_diff(a.stddev, b.stddev)) / scale;
}

class ConvCnp1d : public testing::SeededTest {
 protected:
  std::shared_ptr<NeuralProcessImpl> model = make_model(tiny_config("convcnp"));
  // tiny_config: 16 points per unit, U-Net depth 2 -> exact under shifts by multiples of 4/16.
  const double granularity = 0.25;
};

TEST_F(ConvCnp1d, ShiftByWholeGridStepsGivesTheSamePrediction) {
  auto task = random_task(2, 10, 20);
  for (int steps : {1, 2, 7, -12, 200}) {
    EXPECT_LT(relative_change(*model, task, steps * granularity), 1e-5) << steps << " steps";
  }
}

// Documented tolerance: shifts that are not multiples of the pooling granularity change the
// prediction only through the grid's phase, by well under 5% of the output scale for an
// untrained model (and less after training, which smooths the U-Net's response).
TEST_F(ConvCnp1d, ArbitraryShiftGivesAClosePrediction) {
  auto task = random_task(2, 10, 20);
  for (double shift : {0.123, 1.0 / 16.0, -2.71}) {
    EXPECT_LT(relative_change(*model, task, shift), 5e-2) << "shift " << shift;
  }
}

TEST_F(ConvCnp1d, TooWideInputRangeIsAClearError) {
  auto task = random_task(1, 4, 4);
  task.xt[0][0][0] = 1e6;
  NPE_EXPECT_THROW_WITH(model->predict(task), ResourceLimitError, "max_grid_points");
  task.xt[0][0][0] = 1e30;  // would overflow an integer grid count
  NPE_EXPECT_THROW_WITH(model->predict(task), ResourceLimitError, "max_grid_points");
}

TEST_F(ConvCnp1d, RejectsTwoDimensionalInputs) {
  NPE_EXPECT_THROW_WITH(make_model(tiny_config("convcnp", 2)), ConfigError, "1-D");
}

TEST(ConvCnp2dGrid, ShiftingTheGridShiftsTheOutputAwayFromBorders) {
  torch::manual_seed(3);
  auto model = std::dynamic_pointer_cast<GridPredictor>(make_model(tiny_config("convcnp2d", 2)));
  ASSERT_TRUE(model);
  torch::NoGradGuard no_grad;
  auto values = torch::randn({1, 24, 24, 1});
  auto mask = torch::rand({1, 24, 24}) < 0.3;
  auto a = model->predict_grid(values, mask);
  auto b = model->predict_grid(values.roll({3, 2}, {1, 2}), mask.roll({3, 2}, {1, 2}));
  // Receptive-field radius of tiny_config: 2 layers x (5 / 2) = 4 cells.
  using torch::indexing::Slice;
  auto interior_a = a.mean.index({Slice(), Slice(4, 16), Slice(4, 16)});
  auto interior_b = b.mean.index({Slice(), Slice(7, 19), Slice(6, 18)});
  EXPECT_LT(max_abs_diff(interior_a, interior_b), 1e-5);
  EXPECT_EQ(a.mean.sizes(), (std::vector<int64_t>{1, 24, 24, 1}));
  EXPECT_TRUE((a.stddev > 0).all().item<bool>());
}

TEST(ConvCnp2dGrid, SetInterfaceIsEquivariantToWholeCellShifts) {
  torch::manual_seed(4);
  auto model = make_model(tiny_config("convcnp2d", 2));
  model->eval();
  Task task{torch::randint(0, 20, {2, 15, 2}).to(torch::kFloat32),
            torch::randn({2, 15, 1}),
            torch::randint(0, 20, {2, 9, 2}).to(torch::kFloat32),
            {}};
  torch::NoGradGuard no_grad;
  auto a = model->predict(task);
  auto b = model->predict(task.translated({5.0, -3.0}));
  EXPECT_LT(max_abs_diff(a.mean, b.mean), 1e-5);
  EXPECT_LT(max_abs_diff(a.stddev, b.stddev), 1e-5);
}

TEST(ConvCnp2dGrid, WrongShapesAreAClearError) {
  auto model = std::dynamic_pointer_cast<GridPredictor>(make_model(tiny_config("convcnp2d", 2)));
  NPE_EXPECT_THROW_WITH(model->predict_grid(torch::randn({1, 8, 8, 2}), torch::ones({1, 8, 8})),
                        InvalidInputError, "expects values");
}

TEST(ConvCnp2dGrid, WorksWithoutContextAndIsOrderInvariant) {
  torch::manual_seed(5);
  auto model = make_model(tiny_config("convcnp2d", 2));
  torch::NoGradGuard no_grad;
  Task empty{torch::zeros({1, 0, 2}),
             torch::zeros({1, 0, 1}),
             torch::randint(0, 10, {1, 6, 2}).to(torch::kFloat32),
             {}};
  auto p = model->predict(empty);
  EXPECT_TRUE(torch::isfinite(p.mean).all().item<bool>());
  Task task{
      torch::randint(0, 10, {1, 8, 2}).to(torch::kFloat32), torch::randn({1, 8, 1}), empty.xt, {}};
  auto order = torch::randperm(8);
  Task permuted{task.xc.index_select(1, order), task.yc.index_select(1, order), task.xt, {}};
  EXPECT_LT(max_abs_diff(model->predict(task).mean, model->predict(permuted).mean), 1e-5);
}

}  // namespace
}  // namespace npe
