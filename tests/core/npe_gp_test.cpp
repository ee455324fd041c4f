// Kernels, the GP task generator and the two GP baselines.

#include <cmath>

#include "npe/data/gp_oracle.h"
#include "npe/data/gp_tasks.h"
#include "npe/ground/gp_posterior.h"
#include "npe/ground/kernels.h"
#include "npe/predictors/gp.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/training/evaluation.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::max_abs_diff;

TEST(Kernels, EqualVarianceAtZeroDistanceAndAreSymmetric) {
  auto x = torch::randn({7, 2}, torch::kFloat64);
  for (auto kind : all_kernel_kinds()) {
    KernelSpec spec{kind, 0.7, 1.0, 1.0, {}};
    auto k = kernel_matrix(spec, x, x);
    EXPECT_LT(max_abs_diff(k.diagonal(), torch::ones({7}, torch::kFloat64)), 1e-9)
        << kernel_name(kind);
    EXPECT_LT(max_abs_diff(k, k.transpose(0, 1)), 1e-12) << kernel_name(kind);
    EXPECT_TRUE((k <= 1.0 + 1e-12).all().item<bool>()) << kernel_name(kind);
  }
}

TEST(Kernels, PeriodicKernelRepeatsWithItsPeriod) {
  auto x = torch::tensor({{0.0}}, torch::kFloat64);
  auto shifted = torch::tensor({{2.0}}, torch::kFloat64);
  KernelSpec spec{KernelKind::Periodic, 0.5, 1.0, 1.0, {}};
  EXPECT_NEAR(kernel_matrix(spec, x, shifted).item<double>(), 1.0, 1e-9);
}

// Paper eq. 36: k_pe = exp(-2 sin^2(pi (x - x') / ell)), so ell is the period and the value
// half a period away is exp(-2).
TEST(Kernels, PaperPeriodicKernelHasEllAsItsPeriod) {
  auto zero = torch::tensor({{0.0}}, torch::kFloat64);
  for (double ell : {0.25, 1.0, 2.5}) {
    const auto spec = paper_kernel(KernelKind::Periodic, ell);
    EXPECT_EQ(spec.period, ell);
    EXPECT_EQ(spec.lengthscale, 1.0);
    auto at = [&](double d) {
      return kernel_matrix(spec, zero, torch::tensor({{d}}, torch::kFloat64)).item<double>();
    };
    EXPECT_NEAR(at(ell), 1.0, 1e-9);
    EXPECT_NEAR(at(0.5 * ell), std::exp(-2.0), 1e-9);
    EXPECT_NEAR(at(0.25 * ell), std::exp(-1.0), 1e-9);
  }
  EXPECT_EQ(paper_kernel(KernelKind::SquaredExponential, 0.7).lengthscale, 0.7);
}

TEST(Kernels, UnknownNameIsAClearError) {
  NPE_EXPECT_THROW_WITH(kernel_kind_from_name("rbf2"), ConfigError, "unknown kernel 'rbf2'");
}

TEST(GpPosterior, MatchesClosedFormForOnePoint) {
  // One observation y = 1 at x = 0, SE kernel (lengthscale 1, variance 1), noise 0.5;
  // prediction at x = 1: mean = k / (1 + s^2), var = 1 - k^2 / (1 + s^2) + s^2, k = e^{-1/2}.
  KernelSpec spec{KernelKind::SquaredExponential, 1.0, 1.0, 1.0, {}};
  auto p = gp_posterior_predictive(spec, 0.5, torch::tensor({{0.0}}, torch::kFloat64),
                                   torch::tensor({{1.0}}, torch::kFloat64),
                                   torch::tensor({{1.0}}, torch::kFloat64));
  const double k = std::exp(-0.5);
  EXPECT_NEAR(p.mean.item<double>(), k / 1.25, 1e-7);
  EXPECT_NEAR(p.stddev.item<double>(), std::sqrt(1.0 - k * k / 1.25 + 0.25), 1e-7);
}

TEST(GpPosterior, EmptyContextGivesThePrior) {
  KernelSpec spec{KernelKind::Matern52, 1.0, 2.0, 1.0, {}};
  auto p = gp_posterior_predictive(spec, 0.1, torch::zeros({0, 1}), torch::zeros({0, 1}),
                                   torch::rand({5, 1}));
  EXPECT_LT(p.mean.abs().max().item<double>(), 1e-12);
  EXPECT_LT(max_abs_diff(p.stddev, torch::full({5, 1}, std::sqrt(2.01))), 1e-6);
}

TEST(GpPosterior, DuplicateInputsAreStable) {
  KernelSpec spec{KernelKind::SquaredExponential, 1.0, 1.0, 1.0, {}};
  auto xc = torch::zeros({10, 1});
  auto yc = torch::ones({10, 1});
  auto p = gp_posterior_predictive(spec, 1e-6, xc, yc, torch::zeros({1, 1}));
  EXPECT_TRUE(torch::isfinite(p.mean).all().item<bool>());
  EXPECT_NEAR(p.mean.item<double>(), 1.0, 1e-3);
}

TEST(GpTaskGenerator, IsDeterministicGivenASeed) {
  GpTaskGenerator generator;
  auto a = generator.sample(4, 42);
  auto b = generator.sample(4, 42);
  auto c = generator.sample(4, 43);
  EXPECT_TRUE(torch::equal(a.task.yt, b.task.yt));
  EXPECT_FALSE(a.task.xt.sizes() == c.task.xt.sizes() && torch::equal(a.task.xt, c.task.xt));
}

TEST(GpTaskGenerator, ShiftedTasksAreTheSameDrawsTranslated) {
  GpTaskGenerator generator;
  auto base = generator.sample(8, 7, {0.0});
  auto shifted = generator.sample(8, 7, {2.5});
  EXPECT_TRUE(torch::equal(base.task.yc, shifted.task.yc));
  EXPECT_TRUE(torch::equal(base.task.yt, shifted.task.yt));
  EXPECT_LT(max_abs_diff(shifted.task.xc - 2.5, base.task.xc), 1e-6);
  EXPECT_LT(max_abs_diff(shifted.task.xt - 2.5, base.task.xt), 1e-6);
}

TEST(GpTaskGenerator, FollowsThePaperRanges) {
  GpTaskGenerator generator;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto batch = generator.sample(16, seed);
    const auto nc = batch.task.num_context();
    EXPECT_GE(nc, 1);
    EXPECT_LE(nc, 64);
    EXPECT_EQ(batch.task.num_targets(), 128);
    EXPECT_GE(batch.task.xc.min().item<double>(), -2.0);
    EXPECT_LE(batch.task.xc.max().item<double>(), 2.0);
    EXPECT_GE(batch.task.xt.min().item<double>(), -3.0);
    EXPECT_LE(batch.task.xt.max().item<double>(), 3.0);
    for (const auto& k : dynamic_cast<const GpOracle&>(*batch.oracle).kernels()) {
      // ell ~ logU(0.25, 4) is the period of the periodic kernel (lengthscale 1), the
      // lengthscale of the others.
      const double ell = k.kind == KernelKind::Periodic ? k.period : k.lengthscale;
      EXPECT_GE(ell, 0.25);
      EXPECT_LE(ell, 4.0);
      if (k.kind == KernelKind::Periodic) {
        EXPECT_EQ(k.lengthscale, 1.0);
      }
    }
    // Inputs stay in float64 until a model sees them.
    EXPECT_EQ(batch.task.xc.scalar_type(), torch::kFloat64);
  }
}

// If the samples have covariance K + noise^2 I, whitening them with that matrix's Cholesky
// factor leaves independent standard normals: mean 0, variance 1, no lag-one correlation.
TEST(GpTaskGenerator, EmpiricalCovarianceMatchesTheKernel) {
  for (auto kind : all_kernel_kinds()) {
    GpTaskConfig config;
    config.kernels = {kind};
    config.min_num_context = config.max_num_context = 4;
    config.num_targets = 8;
    GpTaskGenerator generator(config);
    std::vector<torch::Tensor> whitened;
    for (uint64_t seed = 0; seed < 40; ++seed) {
      auto batch = generator.sample(16, seed);
      const auto& kernels = dynamic_cast<const GpOracle&>(*batch.oracle).kernels();
      for (int64_t b = 0; b < 16; ++b) {
        auto x = torch::cat({batch.task.xc[b], batch.task.xt[b]}).to(torch::kFloat64);
        auto y = torch::cat({batch.task.yc[b], batch.task.yt[b]}).to(torch::kFloat64);
        auto k = kernel_matrix(kernels[b], x, x) +
                 (0.04 + 1e-6) * torch::eye(x.size(0), torch::kFloat64);
        auto chol = torch::linalg_cholesky(k);
        whitened.push_back(torch::linalg_solve_triangular(chol, y, false).squeeze(-1));
      }
    }
    auto w = torch::stack(whitened);  // [640, 12]
    EXPECT_NEAR(w.mean().item<double>(), 0.0, 0.05) << kernel_name(kind);
    EXPECT_NEAR(w.var().item<double>(), 1.0, 0.1) << kernel_name(kind);
    auto lag = (w.narrow(1, 0, 11) * w.narrow(1, 1, 11)).mean().item<double>();
    EXPECT_NEAR(lag, 0.0, 0.07) << kernel_name(kind);
  }
}

TEST(GpTaskGenerator, RejectsInvalidConfigurations) {
  GpTaskConfig config;
  config.min_lengthscale = -1;
  NPE_EXPECT_THROW_WITH(GpTaskGenerator{config}, ConfigError, "lengthscale");
}

TEST(GpBaselines, OracleBeatsFittedGpOnAFixedTestSet) {
  GpTaskGenerator generator;
  EvalOptions options;
  options.num_tasks = 64;
  options.seed = 5;
  auto oracle_predictor = make_predictor("gp-oracle");
  auto oracle = evaluate(*oracle_predictor, generator, options);
  PredictorOptions fit;
  fit.fitted.iterations = 100;
  auto fitted_predictor = make_predictor("gp-fitted", fit);
  auto fitted = evaluate(*fitted_predictor, generator, options);
  EXPECT_GT(oracle.ll_mean, fitted.ll_mean);
  EXPECT_TRUE(std::isfinite(fitted.ll_mean));
  // Sanity: the oracle is far better than a standard normal guess (about -1.42).
  EXPECT_GT(oracle.ll_mean, -1.0);
}

TEST(GpBaselines, FittingRaisesTheMarginalLikelihood) {
  GpTaskGenerator generator;
  auto batch = generator.sample(4, 11);
  FittedGpOptions none;
  none.iterations = 0;
  FittedGpOptions some;
  some.iterations = 150;
  auto before = fit_gp(batch.task, none);
  auto after = fit_gp(batch.task, some);
  for (int64_t b = 0; b < 4; ++b) {
    auto lml = [&](const FittedGp& f) {
      auto opts = torch::TensorOptions().dtype(torch::kFloat64);
      return gp_log_marginal_likelihood(f.kernels[b].kind,
                                        batch.task.xc[b].unsqueeze(0).to(torch::kFloat64),
                                        batch.task.yc[b].unsqueeze(0).to(torch::kFloat64),
                                        torch::tensor(f.kernels[b].lengthscale, opts),
                                        torch::tensor(f.kernels[b].variance, opts),
                                        torch::tensor(f.noise_std[b] * f.noise_std[b], opts),
                                        torch::tensor(f.kernels[b].period, opts))
          .item<double>();
    };
    EXPECT_GE(lml(after), lml(before) - 1e-6) << "task " << b;
  }
}

// The fitted GP is not told the period: it finds it from the data (here periods of 0.6 and
// 1.5 on [-2, 2]; much shorter periods are aliased by 64 points and harder to pin down).
TEST(GpBaselines, FittedGpFindsThePeriod) {
  for (double period : {0.6, 1.5}) {
    GpTaskConfig config;
    config.kernels = {KernelKind::Periodic};
    config.min_lengthscale = config.max_lengthscale = period;  // ell is the period (eq. 36)
    config.min_num_context = config.max_num_context = 64;
    config.noise_std = 0.05;
    GpTaskGenerator generator(config);
    auto batch = generator.sample(4, 3);
    FittedGpOptions options;
    options.kernels = {KernelKind::Periodic};
    options.iterations = 300;
    auto fitted = fit_gp(batch.task, options);
    for (int64_t b = 0; b < 4; ++b) {
      EXPECT_NEAR(fitted.kernels[b].period / period, 1.0, 0.05)
          << "task " << b << ": true period " << period << ", fitted period "
          << fitted.kernels[b].period << " lengthscale " << fitted.kernels[b].lengthscale
          << " noise " << fitted.noise_std[b];
    }
  }
}

TEST(GpBaselines, WorkWithoutContext) {
  GpTaskConfig config;
  config.min_num_context = config.max_num_context = 0;
  GpTaskGenerator generator(config);
  auto batch = generator.sample(3, 1);
  auto oracle = batch.oracle->predict(batch.task);
  auto fitted = gp_fitted_predict(batch.task, {});
  EXPECT_TRUE(torch::isfinite(oracle.stddev).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(fitted.mean).all().item<bool>());
}

TEST(GpBaselines, OracleNeedsOneKernelPerTask) {
  GpTaskGenerator generator;
  auto batch = generator.sample(3, 1);
  auto kernels = dynamic_cast<const GpOracle&>(*batch.oracle).kernels();
  kernels.pop_back();
  NPE_EXPECT_THROW_WITH(gp_oracle_predict(batch.task, kernels, 0.2), InvalidInputError,
                        "one kernel per task");
}

}  // namespace
}  // namespace npe
