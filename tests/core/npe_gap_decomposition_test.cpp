// The gap to a reference predictor split into a mean part and a spread part (npe bench gap),
// and the least-squares fits that relate it to a property of each task.

#include <cmath>
#include <limits>
#include <memory>

#include "npe/data/gp_tasks.h"
#include "npe/errors.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/training/gap_decomposition.h"
#include "test_support.h"

namespace npe {
namespace {

// Another predictor's mean with its spread multiplied by `factor` and its mean moved by
// `offset`: a model whose error is known.
class Altered final : public Predictor {
 public:
  Altered(Predictor& base, double factor, double offset)
      : Predictor({"altered", "altered", "the base's prediction, altered", {}}),
        m_base(base),
        m_factor(factor),
        m_offset(offset) {}
  Prediction predict(const TaskBatch& batch) override {
    auto p = m_base.predict(batch);
    return {p.mean + m_offset, p.stddev * m_factor};
  }

 private:
  Predictor& m_base;
  double m_factor, m_offset;
};

EvalOptions few_tasks() {
  EvalOptions options;
  options.num_tasks = 24;
  options.batch_size = 8;
  options.seed = 5;
  return options;
}

TEST(GapDecomposition, PartsAddUpAndSeparateTheMeanFromTheSpread) {
  GpTaskGenerator source;
  auto oracle = make_predictor("gp-oracle");
  Altered wider(*oracle, 1.5, 0.0), shifted(*oracle, 1.0, 0.3), both(*oracle, 1.5, 0.3);
  const auto gaps =
      decompose_gaps({oracle.get(), &wider, &shifted, &both}, *oracle, source, few_tasks());
  ASSERT_EQ(gaps.size(), 4u);
  for (const auto& model : gaps) {
    ASSERT_EQ(model.size(), 24u);
    for (const auto& g : model) {
      EXPECT_NEAR(g.gap, g.mean_part + g.spread_part, 1e-9);
      EXPECT_FALSE(g.kind.empty());  // GP tasks name their kernel family
      EXPECT_TRUE(std::isfinite(g.scale));
      EXPECT_TRUE(std::isnan(g.covariate));  // none asked for
    }
  }
  for (const auto& g : gaps[0]) {  // the reference against itself
    EXPECT_NEAR(g.gap, 0.0, 1e-9);
    EXPECT_NEAR(g.mean_part, 0.0, 1e-9);
  }
  // The same mean: all of the gap is the spread's. A spread 1.5 times the exact one costs
  // log 1.5 - (1 - 1 / 1.5²) / 2 = 0.128 nats per target in expectation (a task's few targets
  // may favour it).
  for (const auto& g : gaps[1]) EXPECT_NEAR(g.mean_part, 0.0, 1e-9);
  EXPECT_GT(summarise_gaps(gaps[1]).spread_part, 0.05);
  // A mean moved by 0.3 costs 0.3² / 2 per unit variance; scored with the reference's own
  // spread, the spread part is zero.
  for (const auto& g : gaps[2]) {
    EXPECT_GT(g.mean_part, 0.0);
    EXPECT_NEAR(g.spread_part, 0.0, 1e-9);
  }
  const auto s = summarise_gaps(gaps[3]);
  EXPECT_EQ(s.num_tasks, 24);
  EXPECT_NEAR(s.gap, s.mean_part + s.spread_part, 1e-9);
  EXPECT_GT(s.gap_stderr, 0.0);
  EXPECT_NEAR(summarise_gaps(gaps[2]).mean_part, summarise_gaps(gaps[3]).mean_part, 1e-9);
  // A selection keeps only its tasks.
  const auto se = summarise_gaps(gaps[3], [](const TaskGap& g) { return g.kind == "se"; });
  EXPECT_GT(se.num_tasks, 0);
  EXPECT_LT(se.num_tasks, 24);
}

TEST(GapDecomposition, CovariateIsRecordedPerTaskAndMustGiveOnePerTask) {
  GpTaskGenerator source;
  auto oracle = make_predictor("gp-oracle");
  const auto gaps =
      decompose_gaps({oracle.get()}, *oracle, source, few_tasks(), [](const TaskBatch& batch) {
        return std::vector<double>(size_t(batch.task.batch_size()),
                                   double(batch.task.num_context()));
      });
  for (const auto& g : gaps[0]) EXPECT_EQ(g.covariate, double(g.num_context));
  EXPECT_THROW(decompose_gaps({oracle.get()}, *oracle, source, few_tasks(),
                              [](const TaskBatch&) { return std::vector<double>{1.0}; }),
               ConfigError);
  auto none = few_tasks();
  none.num_tasks = 0;
  EXPECT_THROW(decompose_gaps({oracle.get()}, *oracle, source, none), ConfigError);
}

TEST(LeastSquares, RecoversKnownCoefficientsAndRefusesWhatItCannotFit) {
  std::vector<double> x1, x2, exact, noisy;
  for (int i = 0; i < 40; ++i) {
    x1.push_back(0.1 * i);
    x2.push_back(std::sin(0.7 * i));
    exact.push_back(2.0 + 3.0 * x1.back());
    noisy.push_back(1.0 - 0.5 * x1.back() + 4.0 * x2.back() + 0.01 * std::cos(3.1 * i));
  }
  const auto line = fit_linear({x1}, exact);
  ASSERT_EQ(line.coefficients.size(), 2u);
  EXPECT_NEAR(line.coefficients[0], 2.0, 1e-9);
  EXPECT_NEAR(line.coefficients[1], 3.0, 1e-9);
  EXPECT_NEAR(line.stderrs[1], 0.0, 1e-9);
  EXPECT_NEAR(line.r_squared, 1.0, 1e-12);
  EXPECT_EQ(line.points, 40);
  const auto plane = fit_linear({x1, x2}, noisy);
  EXPECT_NEAR(plane.coefficients[1], -0.5, 0.01);
  EXPECT_NEAR(plane.coefficients[2], 4.0, 0.01);
  EXPECT_GT(plane.stderrs[2], 0.0);
  EXPECT_GT(plane.r_squared, 0.99);
  // One predictor alone leaves x2's part in the residual: a lower R².
  EXPECT_LT(fit_linear({x1}, noisy).r_squared, 0.5);
  std::vector<double> twice;
  for (double v : x1) twice.push_back(2.0 * v + 1.0);
  EXPECT_THROW(fit_linear({x1, twice}, noisy), ConfigError);
  EXPECT_THROW(fit_linear({std::vector<double>(40, 1.0)}, noisy), ConfigError);
  EXPECT_THROW(fit_linear({{1.0, 2.0}}, {1.0, 2.0}), ConfigError);
  EXPECT_THROW(fit_linear({x1}, {1.0, 2.0, 3.0}), ConfigError);
}

}  // namespace
}  // namespace npe
