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
};

// The grid is anchored at each task's leftmost context point, so every shift (a fraction of a
// grid spacing, of a pooling block, or far outside any training range) gives the same
// prediction up to float32 rounding of the inputs measured from the anchor (1e-5 of the output
// scale; a grid fixed in absolute coordinates changed it by up to 5 % at 0.123).
// Inputs in float64, as tasks carry them: in float32, x + 12345.678 keeps only 1/1024 of a unit.
TEST_F(ConvCnp1d, AnyShiftGivesTheSamePrediction) {
  auto task = random_task(2, 10, 20).to(torch::kCPU, torch::kFloat64);
  for (double shift : {0.2, 0.3, 1.0 / 3.0, 0.123, 1.0 / 16.0, -2.71, 12345.678, 200 * 0.25}) {
    EXPECT_LT(relative_change(*model, task, shift), 1e-5) << "shift " << shift;
  }
}

// Without a context the grid is anchored at the leftmost target instead.
TEST_F(ConvCnp1d, AnyShiftGivesTheSamePredictionWithoutContext) {
  auto task = random_task(2, 0, 20);
  for (double shift : {0.3, -7.77}) {
    EXPECT_LT(relative_change(*model, task, shift), 1e-5) << "shift " << shift;
  }
}

// A task's prediction does not depend on the other tasks of its batch beyond the grid's
// extent, which only adds empty cells outside every task's receptive field.
TEST_F(ConvCnp1d, APredictionDoesNotDependOnTheOtherTasksOfItsBatch) {
  torch::NoGradGuard no_grad;
  auto task = random_task(2, 10, 20);
  task.xc[1] += 0.37;  // a second task at another phase of the grid
  task.xt[1] += 0.37;
  Task first{task.xc.narrow(0, 0, 1), task.yc.narrow(0, 0, 1), task.xt.narrow(0, 0, 1), {}};
  auto together = model->predict(task);
  auto alone = model->predict(first);
  EXPECT_LT(max_abs_diff(together.mean.narrow(0, 0, 1), alone.mean), 1e-5);
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
