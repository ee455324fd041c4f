// Joint predictives: the masks of TNP-D and TNP-A, the TNP-ND covariance against its closed
// form, joint log-likelihoods and samples of the GP, and TE-TNP-ND's equivariance.

#include <cmath>

#include "npe/data/gp_tasks.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/gp.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/training/evaluation.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::max_abs_diff;
using testing::random_task;
using testing::tiny_config;

std::shared_ptr<NeuralProcessImpl> tiny(const std::string& kind, int64_t dim_x = 1,
                                        int64_t dim_y = 1) {
  torch::manual_seed(5);
  auto model = make_model(tiny_config(kind, dim_x, dim_y));
  model->eval();
  return model;
}

torch::Generator generator(uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

// log N(y | mean, covariance) from first principles (inverse and log-determinant), float64.
double closed_form_log_density(const torch::Tensor& y, const torch::Tensor& mean,
                               const torch::Tensor& covariance) {
  auto r = (y - mean).to(torch::kFloat64).reshape({-1, 1});
  auto quad = r.t().matmul(torch::inverse(covariance)).matmul(r).item<double>();
  const double n = double(r.size(0));
  return -0.5 * quad - 0.5 * torch::logdet(covariance).item<double>() -
         0.5 * n * std::log(2 * M_PI);
}

TEST(TnpD, TargetsDoNotAttendToEachOther) {
  auto model = tiny("tnpd");
  torch::NoGradGuard no_grad;
  auto task = random_task(2, 6, 5);
  auto moved = task;
  moved.xt = task.xt.clone();
  moved.xt.select(1, 4).add_(1.5);  // only the last target moves
  auto a = model->predict(task);
  auto b = model->predict(moved);
  EXPECT_LT(max_abs_diff(a.mean.narrow(1, 0, 4), b.mean.narrow(1, 0, 4)), 1e-6);
  EXPECT_GT(max_abs_diff(a.mean.narrow(1, 4, 1), b.mean.narrow(1, 4, 1)), 1e-4);
}

// With a correct mask, only the last target's own term depends on its value: the joint
// log-likelihood is then exactly a quadratic in y_last (a Gaussian log-density), so its third
// finite difference vanishes. Changing the first target's value, which later targets see
// through the network, is not quadratic: the test can fail.
double third_difference(NeuralProcessImpl& model, const Task& task, int64_t target) {
  double values[4];
  for (int k = 0; k < 4; ++k) {
    auto t = task;
    t.yt = task.yt.clone();
    t.yt.select(1, target).add_(0.7 * k);
    values[k] = model.log_likelihood(t).item<double>() * double(task.num_targets());
  }
  return values[3] - 3 * values[2] + 3 * values[1] - values[0];
}

TEST(TnpA, EarlierTargetsDoNotSeeLaterValues) {
  auto model = tiny("tnpa");
  torch::NoGradGuard no_grad;
  auto task = random_task(1, 4, 6);
  task = task.to(torch::kCPU, torch::kFloat64);
  model->to(torch::kFloat64);
  EXPECT_LT(std::abs(third_difference(*model, task, 5)), 1e-8);
  EXPECT_GT(std::abs(third_difference(*model, task, 0)), 1e-6);
}

TEST(TnpA, FirstTargetIsTheOneStepPredictiveAndSamplesAreReproducible) {
  auto model = tiny("tnpa");
  torch::NoGradGuard no_grad;
  auto task = random_task(2, 5, 1);
  // With one target, the joint likelihood is its one-step predictive (the marginal).
  auto marginal = log_likelihood_per_task(model->predict(task), task.yt);
  EXPECT_LT(max_abs_diff(model->log_likelihood(task), marginal), 1e-5);

  auto wide = random_task(2, 5, 8);
  auto a = model->sample(wide, 3, generator(11));
  auto b = model->sample(wide, 3, generator(11));
  auto c = model->sample(wide, 3, generator(12));
  EXPECT_EQ(a.sizes(), (std::vector<int64_t>{3, 2, 8, 1}));
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, c));
  EXPECT_TRUE(torch::isfinite(a).all().item<bool>());
}

TEST(TnpA, SamplesOfOneTargetFollowItsPredictive) {
  auto model = tiny("tnpa");
  torch::NoGradGuard no_grad;
  auto task = random_task(1, 5, 1);
  auto p = model->predict(task);
  auto samples = model->sample(task, 20000, generator(3)).reshape({-1});
  const double mean = p.mean.item<double>(), stddev = p.stddev.item<double>();
  EXPECT_NEAR(samples.mean().item<double>(), mean, 0.05 * stddev);
  EXPECT_NEAR(samples.std().item<double>(), stddev, 0.05 * stddev);
}

TEST(TnpA, PermutationAveragingGivesAFiniteMixtureLikelihood) {
  auto config = tiny_config("tnpa");
  config.options<PermutationOptions>().num_permutations = 4;
  torch::manual_seed(5);
  auto model = make_model(config);
  model->eval();
  torch::NoGradGuard no_grad;
  auto task = random_task(3, 4, 6);
  auto averaged = model->log_likelihood(task);
  EXPECT_TRUE(torch::isfinite(averaged).all().item<bool>());
  EXPECT_EQ(averaged.sizes(), (std::vector<int64_t>{3}));
  // The same weights scoring one order give another value: the orders are averaged.
  config.options<PermutationOptions>().num_permutations = 1;
  torch::manual_seed(5);
  auto single = make_model(config);
  single->eval();
  EXPECT_GT(max_abs_diff(single->log_likelihood(task), averaged), 1e-6);
}

// TNP-ND with a one-layer projection whose weights are zero and bias b: every target's vector
// is h = b, so Sigma has a closed form.
TEST(TnpNd, CholeskyCovarianceMatchesTheClosedForm) {
  auto config = tiny_config("tnpnd");
  config.options<CovarianceOptions>().projection_layers = 1;
  config.options<CovarianceOptions>().projection_dim = 3;
  auto model = make_model(config);
  model->eval();
  torch::NoGradGuard no_grad;
  auto params = model->named_parameters();
  params["projection.linear0.weight"].zero_();
  params["projection.linear0.bias"].copy_(torch::tensor({0.5, -1.0, 0.25}));
  auto task = random_task(1, 4, 3);
  auto joint = model->joint_predictive(task);
  ASSERT_TRUE(joint.has_value());
  const double g = 0.25 + 1.0 + 0.0625;  // ||b||^2
  auto l = torch::full({3, 3}, g, torch::kFloat64).tril(-1) +
           torch::eye(3, torch::kFloat64) * (g + config.min_stddev);
  auto expected = l.matmul(l.t());
  auto covariance = joint->covariance()[0];
  EXPECT_LT(max_abs_diff(covariance, expected), 1e-9);
  EXPECT_TRUE((torch::linalg_eigvalsh(covariance, "L") > 0).all().item<bool>());
  // The joint log-likelihood is the multivariate normal density per target.
  const double ll = model->log_likelihood(task).item<double>() * 3;
  EXPECT_NEAR(ll, closed_form_log_density(task.yt[0], joint->mean[0], expected), 1e-4);
  // The marginals are the square roots of the covariance's diagonal.
  auto p = model->predict(task);
  EXPECT_LT(max_abs_diff(p.stddev[0].reshape({-1}).to(torch::kFloat64), expected.diagonal().sqrt()),
            1e-5);
}

TEST(TnpNd, LowRankCovarianceMatchesTheClosedForm) {
  auto config = tiny_config("tnpnd");
  config.options<CovarianceOptions>().covariance = "lowrank";
  config.options<CovarianceOptions>().projection_layers = 1;
  config.options<CovarianceOptions>().projection_dim = 2;
  auto model = make_model(config);
  model->eval();
  torch::NoGradGuard no_grad;
  auto params = model->named_parameters();
  params["projection.linear0.weight"].zero_();
  params["projection.linear0.bias"].copy_(torch::tensor({std::log(0.3), 0.6, -0.8}));
  auto task = random_task(1, 4, 3);
  auto joint = model->joint_predictive(task);
  ASSERT_TRUE(joint.has_value());
  // Sigma = diag(exp d + min_stddev^2) + a a^T for every pair: ||a||^2 = 1.
  auto expected = torch::ones({3, 3}, torch::kFloat64) +
                  torch::eye(3, torch::kFloat64) * (0.3 + config.min_stddev * config.min_stddev);
  EXPECT_LT(max_abs_diff(joint->covariance()[0], expected), 1e-6);
  auto p = model->predict(task);
  EXPECT_LT(max_abs_diff(p.stddev[0].reshape({-1}).to(torch::kFloat64), expected.diagonal().sqrt()),
            1e-5);
}

TEST(TnpNd, RefusesTooManyJointTargetsClearly) {
  auto model = tiny("tnpnd");
  torch::NoGradGuard no_grad;
  auto task = random_task(1, 3, kMaxJointTargets + 1);
  NPE_EXPECT_THROW_WITH(model->joint_predictive(task), ResourceLimitError, "at most 4096");
}

TEST(TnpNd, WorksForSeveralOutputsAndWithoutContext) {
  auto model = tiny("tnpnd", 2, 2);
  torch::NoGradGuard no_grad;
  auto task = random_task(2, 0, 5, 2, 2);
  auto joint = model->joint_predictive(task);
  ASSERT_TRUE(joint.has_value());
  EXPECT_EQ(joint->covariance().sizes(), (std::vector<int64_t>{2, 10, 10}));
  auto samples = model->sample(task, 4, generator(1));
  EXPECT_EQ(samples.sizes(), (std::vector<int64_t>{4, 2, 5, 2}));
  EXPECT_TRUE(torch::isfinite(model->log_likelihood(task)).all().item<bool>());
}

TEST(TeTnpNd, CovarianceMovesWithTheData) {
  auto model = tiny("tetnpnd", 2);
  torch::NoGradGuard no_grad;
  auto task = random_task(2, 7, 6, 2);
  auto a = model->joint_predictive(task);
  auto b = model->joint_predictive(task.translated({40.0, -13.5}));
  ASSERT_TRUE(a && b);
  EXPECT_LT(max_abs_diff(a->mean, b->mean), 1e-4);
  EXPECT_LT(max_abs_diff(a->covariance(), b->covariance()) /
                std::max(1.0, a->covariance().abs().max().item<double>()),
            1e-4);
  // The plain TNP-ND's covariance does change (so the comparison can fail).
  auto plain = tiny("tnpnd", 2);
  auto c = plain->joint_predictive(task);
  auto d = plain->joint_predictive(task.translated({40.0, -13.5}));
  EXPECT_GT(max_abs_diff(c->covariance(), d->covariance()), 1e-3);
}

TEST(DiagonalModels, JointLikelihoodIsTheMarginalOneAndSamplingIsRefused) {
  auto model = tiny("tnp");
  torch::NoGradGuard no_grad;
  auto task = random_task(3, 5, 7);
  auto marginal = log_likelihood_per_task(model->predict(task), task.yt);
  EXPECT_LT(max_abs_diff(model->log_likelihood(task), marginal), 1e-6);
  NPE_EXPECT_THROW_WITH(model->sample(task, 2, generator(0)), ConfigError,
                        "cannot draw coherent samples");

  auto predictor = wrap_model(model);
  GpTaskGenerator source;
  EvalOptions options;
  options.num_tasks = 32;
  const auto result = evaluate(*predictor, source, options);
  EXPECT_DOUBLE_EQ(result.ll_joint_mean, result.ll_mean);
}

TEST(GpJoint, OracleSamplesHaveThePredictiveCovariance) {
  GpTaskGenerator source;
  auto batch = source.sample(1, 3);
  batch.task.xt = batch.task.xt.narrow(1, 0, 4);
  batch.task.yt = batch.task.yt.narrow(1, 0, 4);
  auto oracle = make_predictor("gp-oracle");
  auto covariance = oracle->predictive_covariance(batch)[0];
  // [count, B, Nt, 1] -> [count, Nt] for the one task.
  auto samples = oracle->sample(batch, 20000, 7).to(torch::kFloat64).select(1, 0).squeeze(-1);
  auto centred = samples - samples.mean(0, true);
  auto empirical = centred.t().matmul(centred) / double(samples.size(0) - 1);
  const double scale = covariance.diagonal().max().item<double>();
  EXPECT_LT(max_abs_diff(empirical, covariance) / scale, 0.05);
  // Its marginals are the oracle's marginal prediction.
  auto p = oracle->predict(batch);
  EXPECT_LT(
      max_abs_diff(covariance.diagonal().sqrt().to(torch::kFloat32), p.stddev[0].reshape({-1})),
      1e-4);
  // Joint and marginal log-likelihoods differ for correlated targets, and the joint one is the
  // closed-form density.
  auto joint_ll = oracle->joint_log_likelihood(batch).item<double>() * 4;
  auto mean = p.mean[0].reshape({-1}).to(torch::kFloat64);
  EXPECT_NEAR(joint_ll, closed_form_log_density(batch.task.yt[0].reshape({-1}), mean, covariance),
              1e-6);
}

TEST(GpJoint, JointLikelihoodBeatsTheMarginalOneOnAverage) {
  // The true process's joint density scores its own draws better than the product of its
  // marginals (the expected gap is a mutual information, >= 0).
  GpTaskGenerator source;
  auto oracle = make_predictor("gp-oracle");
  EvalOptions options;
  options.num_tasks = 64;
  const auto result = evaluate(*oracle, source, options);
  EXPECT_GT(result.ll_joint_mean, result.ll_mean);
}

}  // namespace
}  // namespace npe
