// The Bayes-optimal GP (gp-bayes): what each property pins is said above its test.

#include <cmath>

#include "npe/data/gp_tasks.h"
#include "npe/errors.h"
#include "npe/predictors/gp.h"
#include "npe/predictors/gp_bayes.h"
#include "npe/predictors/predictor_registry.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::max_abs_diff;

// A prior of one family and one scale (min = max) has a single hypothesis: the mixture is that
// GP, so gp-bayes must equal the oracle in every output (this pins the predictive algebra).
TEST(GpBayes, OneHypothesisEqualsTheOracle) {
  for (auto kind : all_kernel_kinds()) {
    GpTaskConfig prior;
    prior.kernels = {kind};
    prior.min_lengthscale = prior.max_lengthscale = 0.7;
    GpTaskGenerator generator(prior);
    auto batch = generator.sample(3, 21);
    batch.task = batch.task.to(torch::kCPU, torch::kFloat64);
    PredictorOptions options;
    options.gp_prior = prior;
    auto bayes = make_predictor("gp-bayes", options);
    auto oracle = make_predictor("gp-oracle");
    const auto b = bayes->predict(batch), o = oracle->predict(batch);
    EXPECT_LT(max_abs_diff(b.mean, o.mean), 1e-6) << kernel_name(kind);
    EXPECT_LT(max_abs_diff(b.stddev, o.stddev), 1e-6) << kernel_name(kind);
    // float64 paths: the mixture of one equals the oracle's own log-likelihoods to 1e-9.
    const auto hyp = gp_prior_hypotheses(prior);
    const auto oracle_joint = oracle->joint_log_likelihood(batch);
    EXPECT_LT(max_abs_diff(gp_bayes_joint_log_likelihood(hyp, batch.task), oracle_joint), 1e-9)
        << kernel_name(kind);
    auto exact = batch.oracle->predict(batch.task);
    auto marginal = log_likelihood_per_task(exact, batch.task.yt).to(torch::kFloat64);
    EXPECT_LT(max_abs_diff(gp_bayes_marginal_log_likelihood(hyp, batch.task), marginal), 1e-9)
        << kernel_name(kind);
  }
}

// The posterior weights are a distribution, and they depend on the context only through
// differences of inputs: translating the task leaves them unchanged.
TEST(GpBayes, WeightsSumToOneAndAreUnchangedByTranslation) {
  GpTaskGenerator generator;
  auto batch = generator.sample(2, 5);
  const auto hyp = gp_prior_hypotheses(GpTaskConfig{});
  auto task = batch.task.to(torch::kCPU, torch::kFloat64);
  for (int64_t b = 0; b < 2; ++b) {
    auto w = gp_hypothesis_predictives(hyp, task, b).log_weights;
    EXPECT_NEAR(w.exp().sum().item<double>(), 1.0, 1e-12);
    auto shifted = gp_hypothesis_predictives(hyp, task.translated({3.7}), b).log_weights;
    EXPECT_LT(max_abs_diff(w.exp(), shifted.exp()), 1e-9);
  }
}

// With many context points from one hypothesis, the posterior concentrates on its family (and
// near its scale): the weights really respond to the marginal likelihood.
TEST(GpBayes, WeightConcentratesOnTheGeneratingHypothesis) {
  GpTaskConfig prior;
  for (auto kind : all_kernel_kinds()) {
    GpTaskConfig one = prior;
    one.kernels = {kind};
    one.min_lengthscale = one.max_lengthscale = 0.6;
    one.min_num_context = one.max_num_context = 200;
    one.noise_std = prior.noise_std;
    GpTaskGenerator generator(one);
    auto task = generator.sample(1, 3).task.to(torch::kCPU, torch::kFloat64);
    const auto hyp = gp_prior_hypotheses(prior);
    auto families = gp_bayes_family_posterior(hyp, task, 0);
    size_t f = 0;
    while (prior.kernels[f] != kind) ++f;
    // SE and Matérn-5/2 at the same lengthscale are hard to tell apart on 200 noisy points
    // (0.80 and 0.86 here), the periodic family is unmistakable.
    EXPECT_GT(families[f], kind == KernelKind::Periodic ? 0.99 : 0.5) << kernel_name(kind);
    // The most probable scale is within 12 % of the truth (three initial cells), the period
    // within one initial cell (a factor 16^(1/64)).
    auto p = gp_hypothesis_predictives(hyp, task, 0);
    const auto best = p.log_weights.argmax().item<int64_t>();
    const double ell =
        kind == KernelKind::Periodic ? p.kernels[best].period : p.kernels[best].lengthscale;
    EXPECT_LT(std::abs(std::log(ell / 0.6)),
              (kind == KernelKind::Periodic ? 1 : 3) * std::log(16.0) / 64)
        << kernel_name(kind);
    // What the tab shows agrees: the family is the most probable one and its median scale is
    // within 12 % of the truth (most of the mass is in one 1/40 bin of log ell around it).
    const auto kernels =
        gp_bayes_kernel_posterior(gp_bayes_posterior(hyp, task.xc[0], task.yc[0]), prior);
    EXPECT_EQ(kernels.most_probable(), f) << kernel_name(kind);
    EXPECT_LT(std::abs(std::log(kernels.families[f].median_scale / 0.6)), 3 * std::log(16.0) / 64)
        << kernel_name(kind);
  }
}

// What the 1-D tab draws: per task a distribution over kernel families whose scale masses add
// up to each family's probability, the same probabilities gp_bayes_family_posterior reports,
// unchanged by translating the task; without context it is the prior (each family 1/3, every
// bin of log ell equal, the median the prior's geometric middle).
TEST(GpBayes, KernelPosteriorIsADistributionOverFamiliesAndScales) {
  GpTaskGenerator generator;
  auto batch = generator.sample(3, 17);
  batch.task = batch.task.to(torch::kCPU, torch::kFloat64);
  auto bayes = make_predictor("gp-bayes");
  const auto posteriors = bayes->kernel_posteriors(batch);
  ASSERT_EQ(posteriors.size(), 3u);
  auto shifted = batch;
  shifted.task = batch.task.translated({-41.5});
  const auto moved = bayes->kernel_posteriors(shifted);
  const auto hyp = gp_prior_hypotheses(GpTaskConfig{});
  for (size_t b = 0; b < posteriors.size(); ++b) {
    const auto& p = posteriors[b];
    EXPECT_EQ(p.scale_low, 0.25);
    EXPECT_EQ(p.scale_high, 4.0);
    ASSERT_EQ(p.families.size(), 3u);
    const auto families = gp_bayes_family_posterior(hyp, batch.task, int64_t(b));
    double total = 0.0;
    for (size_t f = 0; f < 3; ++f) {
      const auto& family = p.families[f];
      ASSERT_EQ(family.scale_mass.size(), 40u);
      double mass = 0.0;
      for (double m : family.scale_mass) {
        EXPECT_GE(m, 0.0);
        mass += m;
      }
      EXPECT_NEAR(mass, family.probability, 1e-12);
      EXPECT_NEAR(family.probability, families[f], 1e-12);
      EXPECT_NEAR(family.probability, moved[b].families[f].probability, 1e-9);
      // A family the context has ruled out (every hypothesis below e^-40 of the best) has
      // no mass and no median.
      if (family.probability > 0.0) {
        EXPECT_NEAR(family.median_scale, moved[b].families[f].median_scale, 1e-6);
        EXPECT_GE(family.median_scale, 0.25);
        EXPECT_LE(family.median_scale, 4.0);
      } else {
        EXPECT_TRUE(std::isnan(family.median_scale));
      }
      total += family.probability;
    }
    EXPECT_NEAR(total, 1.0, 1e-12);
  }
  auto empty = batch;
  empty.task.xc = batch.task.xc.narrow(1, 0, 0);
  empty.task.yc = batch.task.yc.narrow(1, 0, 0);
  const auto prior_only = bayes->kernel_posteriors(empty);
  for (const auto& family : prior_only.at(0).families) {
    EXPECT_NEAR(family.probability, 1.0 / 3.0, 1e-12);
    for (double m : family.scale_mass) EXPECT_NEAR(m, 1.0 / 120.0, 1e-12);
    EXPECT_NEAR(family.median_scale, 1.0, 1e-9);
  }
  EXPECT_THROW(gp_bayes_kernel_posterior(
                   gp_bayes_posterior(hyp, batch.task.xc[0], batch.task.yc[0]), GpTaskConfig{}, 0),
               ConfigError);
  // Predictors that do not weigh kernels have nothing to say.
  EXPECT_TRUE(make_predictor("gp-oracle")->kernel_posteriors(batch).empty());
  EXPECT_TRUE(make_predictor("gp-fitted")->kernel_posteriors(batch).empty());
}

// Jensen: the moment-matched Gaussian cannot beat the mixture it summarises on average (the
// mixture is the true predictive of these tasks); and the oracle, which knows each task's
// kernel, beats both.
TEST(GpBayes, MomentMatchedGaussianNeverBeatsTheMixtureOnAverage) {
  GpTaskGenerator generator;
  const auto hyp = gp_prior_hypotheses(GpTaskConfig{});
  double gaussian = 0, mixture = 0, oracle = 0;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    auto batch = generator.sample(8, 100 + seed);
    auto task = batch.task.to(torch::kCPU, torch::kFloat64);
    gaussian += log_likelihood_per_task(gp_bayes_predict(hyp, task), task.yt).mean().item<double>();
    mixture += gp_bayes_marginal_log_likelihood(hyp, task).mean().item<double>();
    oracle += log_likelihood_per_task(batch.oracle->predict(task), task.yt).mean().item<double>();
  }
  EXPECT_LE(gaussian, mixture);
  EXPECT_LT(mixture, oracle);
}

// Samples come from the mixture: their covariance approaches the mixture covariance (law of
// total covariance), which is wider than the most probable hypothesis' alone would be.
TEST(GpBayes, SamplesMatchTheMixtureCovariance) {
  GpTaskConfig prior;
  prior.num_targets = 4;
  prior.min_num_context = prior.max_num_context = 3;
  GpTaskGenerator generator(prior);
  auto batch = generator.sample(1, 8);
  auto bayes = make_predictor("gp-bayes");
  auto covariance = bayes->predictive_covariance(batch)[0];
  auto samples = bayes->sample(batch, 20000, 1).to(torch::kFloat64).view({20000, 4});
  auto centred = samples - samples.mean(0, true);
  auto empirical = centred.transpose(0, 1).matmul(centred) / 19999.0;
  const double scale = covariance.abs().max().item<double>();
  EXPECT_LT(max_abs_diff(empirical, covariance) / scale, 0.05);
  // The marginal variances of predict() are the covariance's diagonal.
  auto p = bayes->predict(batch);
  EXPECT_LT(
      max_abs_diff(p.stddev[0].reshape({-1}).to(torch::kFloat64).square(), covariance.diagonal()),
      1e-5);
}

// The entropy of the posterior over log period (npe bench gap's covariate): without context
// that of the log-uniform prior, log(log(max / min)); a context of many cycles pins the period
// down; a fixed period, or a family with no mass, has none.
TEST(GpBayes, ScaleEntropyIsThePriorsWithoutContextAndFallsWithData) {
  GpTaskConfig prior;
  prior.kernels = {KernelKind::Periodic};
  const auto hyp = gp_prior_hypotheses(prior);
  const auto empty = torch::zeros({0, 1}, torch::kFloat64);
  const double prior_entropy = std::log(std::log(prior.max_lengthscale / prior.min_lengthscale));
  EXPECT_NEAR(gp_bayes_scale_entropy(gp_bayes_posterior(hyp, empty, empty), 0), prior_entropy,
              1e-9);
  auto one = prior;
  one.min_lengthscale = one.max_lengthscale = 0.6;
  one.min_num_context = one.max_num_context = 60;
  auto task = GpTaskGenerator(one).sample(1, 3).task.to(torch::kCPU, torch::kFloat64);
  const auto posterior = gp_bayes_posterior(hyp, task.xc[0], task.yc[0]);
  EXPECT_LT(gp_bayes_scale_entropy(posterior, 0), prior_entropy - 2.0);
  EXPECT_TRUE(std::isnan(gp_bayes_scale_entropy(posterior, 1)));  // no such family
  const auto fixed = gp_prior_hypotheses(one);
  EXPECT_TRUE(
      std::isnan(gp_bayes_scale_entropy(gp_bayes_posterior(fixed, task.xc[0], task.yc[0]), 0)));
}

TEST(GpBayes, EmptyContextGivesThePriorAndBadOptionsAreClearErrors) {
  Task task{torch::zeros({1, 0, 1}), torch::zeros({1, 0, 1}),
            torch::linspace(-1, 1, 5).view({1, 5, 1}), torch::zeros({1, 5, 1})};
  auto p = make_predictor("gp-bayes")->predict({task, {}});
  EXPECT_LT(p.mean.abs().max().item<double>(), 1e-12);
  EXPECT_LT(max_abs_diff(p.stddev, torch::full({1, 5, 1}, std::sqrt(1.04))), 1e-6);
  PredictorOptions options;
  options.gp_bayes.grid_points = 0;
  NPE_EXPECT_THROW_WITH(make_predictor("gp-bayes", options), ConfigError, "grid_points");
  options.gp_bayes.grid_points = 8;
  options.gp_max_context = 2;
  Task big{torch::rand({1, 3, 1}), torch::rand({1, 3, 1}), torch::rand({1, 2, 1}), {}};
  NPE_EXPECT_THROW_WITH(make_predictor("gp-bayes", options)->predict({big, {}}), ResourceLimitError,
                        "limited to 2");
}

}  // namespace
}  // namespace npe
