// Exact translation equivariance of the TE models and RCNP, and its clear failure for TNP and
// CNP (which proves the test can fail).

#include "npe/model_registry.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::random_task;
using testing::tiny_config;

// Largest change of the prediction when all inputs move by tau, relative to the output scale.
double equivariance_error(NeuralProcessImpl& model, const Task& task, const torch::Tensor& tau) {
  torch::NoGradGuard no_grad;
  auto a = model.predict(task);
  auto b = model.predict(task.translated(tau));
  const double scale = std::max(1.0, a.mean.abs().max().item<double>());
  const double mean_error = (a.mean - b.mean).abs().max().item<double>();
  const double std_error = (a.stddev - b.stddev).abs().max().item<double>();
  return std::max(mean_error, std_error) / scale;
}

std::vector<torch::Tensor> shifts(int64_t dim_x) {
  std::vector<torch::Tensor> taus;
  for (double t : {0.37, -3.0, 50.0}) {
    auto tau = torch::full({dim_x}, t);
    if (dim_x > 1) tau[1] = -t / 2;  // not along the diagonal
    taus.push_back(tau);
  }
  return taus;
}

struct Case {
  std::string kind;
  int64_t dim_x;
};

class EquivariantModel : public ::testing::TestWithParam<Case> {};

TEST_P(EquivariantModel, PredictionsMoveWithTheData) {
  torch::manual_seed(7);
  const auto& param = GetParam();
  auto model = make_model(tiny_config(param.kind, param.dim_x, 1));
  model->eval();
  auto task = random_task(2, 12, 10, param.dim_x, 1);
  for (const auto& tau : shifts(param.dim_x)) {
    const double error = equivariance_error(*model, task, tau);
    EXPECT_LT(error, 1e-4) << param.kind << " D_x=" << param.dim_x << " tau=" << tau;
    RecordProperty(param.kind + "_dx" + std::to_string(param.dim_x) + "_tau" +
                       std::to_string(tau[0].item<double>()),
                   ::testing::PrintToString(error));
  }
}

INSTANTIATE_TEST_SUITE_P(TeModels, EquivariantModel,
                         ::testing::Values(Case{"tetnp", 1}, Case{"tetnp", 2}, Case{"tepttnp", 1},
                                           Case{"tepttnp", 2}, Case{"rcnp", 1}, Case{"rcnp", 2}),
                         [](const auto& info) {
                           return info.param.kind + "_dx" + std::to_string(info.param.dim_x);
                         });

TEST(EquivariantModel, HoldsWithoutContextToo) {
  torch::manual_seed(8);
  for (const std::string kind : {"tetnp", "tepttnp", "rcnp"}) {
    auto model = make_model(tiny_config(kind));
    auto task = random_task(2, 0, 6);
    EXPECT_LT(equivariance_error(*model, task, torch::full({1}, 50.0)), 1e-4) << kind;
  }
}

class NonEquivariantModel : public ::testing::TestWithParam<std::string> {};

TEST_P(NonEquivariantModel, PredictionsChangeWhenTheDataMove) {
  torch::manual_seed(7);
  auto model = make_model(tiny_config(GetParam(), 1, 1));
  model->eval();
  auto task = random_task(2, 12, 10);
  EXPECT_GT(equivariance_error(*model, task, torch::full({1}, 50.0)), 1e-2) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(PlainModels, NonEquivariantModel, ::testing::Values("tnp", "cnp", "pttnp"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace npe
