// Behaviour every neural-process model must have: shapes, positive stddev, empty context,
// permutation invariance, and a short training run that lowers the loss.

#include <limits>

#include "npe/data/gp_tasks.h"
#include "npe/models/context_spectrum.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/training/evaluation.h"
#include "npe/training/training.h"
#include "npe/training/training_job.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::max_abs_diff;
using testing::random_task;
using testing::tiny_config;

// Every registered kind that takes scattered inputs (the on-grid ConvCNP has its own suite).
std::vector<std::string> scattered_input_kinds() {
  std::vector<std::string> kinds;
  for (const auto& info : model_infos()) {
    if (!info.on_grid) kinds.push_back(info.kind);
  }
  return kinds;
}

class EveryModel : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { torch::manual_seed(99); }
  std::shared_ptr<NeuralProcessImpl> build(int64_t dim_y = 1) {
    auto model = make_model(tiny_config(GetParam(), 1, dim_y));
    model->eval();
    return model;
  }
};

TEST_P(EveryModel, PredictsOneGaussianPerTarget) {
  auto model = build(2);
  torch::NoGradGuard no_grad;
  auto p = model->predict(random_task(3, 5, 7, 1, 2));
  EXPECT_EQ(p.mean.sizes(), (std::vector<int64_t>{3, 7, 2}));
  EXPECT_EQ(p.stddev.sizes(), (std::vector<int64_t>{3, 7, 2}));
  EXPECT_TRUE((p.stddev > 0).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(p.mean).all().item<bool>());
}

TEST_P(EveryModel, WorksWithoutContext) {
  auto model = build();
  torch::NoGradGuard no_grad;
  auto p = model->predict(random_task(2, 0, 9));
  EXPECT_EQ(p.mean.size(1), 9);
  EXPECT_TRUE(torch::isfinite(p.mean).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(p.stddev).all().item<bool>());
  EXPECT_TRUE((p.stddev > 0).all().item<bool>());
}

// The caller's task is not changed: a scene's float64 task goes to several models in turn, and
// a translation-equivariant model measures inputs from a reference point of the data (once in
// place, on the caller's own tensors, so the next model saw the data moved back to the origin).
TEST_P(EveryModel, LeavesTheCallersFloat64TaskAsItWas) {
  auto model = build();
  torch::NoGradGuard no_grad;
  auto task = random_task(2, 5, 7).to(torch::kCPU, torch::kFloat64);
  task.xc += 37.0;
  task.xt += 37.0;
  const auto xc = task.xc.clone(), xt = task.xt.clone();
  model->predict(task);
  EXPECT_TRUE(torch::equal(task.xc, xc));
  EXPECT_TRUE(torch::equal(task.xt, xt));
}

TEST_P(EveryModel, IsInvariantToContextOrder) {
  auto model = build();
  torch::NoGradGuard no_grad;
  auto task = random_task(2, 11, 6);
  auto order = torch::randperm(11);
  Task permuted{task.xc.index_select(1, order), task.yc.index_select(1, order), task.xt, {}};
  auto a = model->predict(task);
  auto b = model->predict(permuted);
  EXPECT_LT(max_abs_diff(a.mean, b.mean), 1e-5);
  EXPECT_LT(max_abs_diff(a.stddev, b.stddev), 1e-5);
}

// centre_per_task: the model sees each task's outputs centred on its context's mean, so a shift
// of the outputs (by 5 in the first, -2 in the second) shifts its predictions and samples alike
// and leaves its deviations and log-likelihood as they were.
TEST_P(EveryModel, CentredPerTaskIsEquivariantToShiftsOfTheOutputs) {
  auto config = tiny_config(GetParam(), 1, 2);
  config.centre_per_task = true;
  auto model = make_model(config);
  model->eval();
  torch::NoGradGuard no_grad;
  auto task = random_task(2, 9, 6, 1, 2).to(torch::kCPU, torch::kFloat64);
  task.yt = torch::randn({2, 6, 2}, torch::kFloat64);
  const auto offset = torch::tensor({5.0, -2.0}, torch::kFloat64);
  const Task moved{task.xc, task.yc + offset, task.xt, task.yt + offset};
  const auto a = model->predict(task), b = model->predict(moved);
  EXPECT_LT(max_abs_diff(a.mean.to(torch::kFloat64) + offset, b.mean.to(torch::kFloat64)), 1e-4);
  EXPECT_LT(max_abs_diff(a.stddev, b.stddev), 1e-4);
  EXPECT_LT(max_abs_diff(model->log_likelihood(task), model->log_likelihood(moved)), 1e-3);
  if (model_info(GetParam()).joint) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(5);
    const auto sa = model->sample(task, 3, generator);
    generator = at::make_generator<at::CPUGeneratorImpl>(5);
    const auto sb = model->sample(moved, 3, generator);
    EXPECT_LT(max_abs_diff(sa.to(torch::kFloat64) + offset, sb.to(torch::kFloat64)), 1e-3);
  }
  // Not centred, the model sees the shift: the test above could fail.
  auto plain = make_model(tiny_config(GetParam(), 1, 2));
  plain->eval();
  EXPECT_GT(max_abs_diff(plain->predict(task).mean.to(torch::kFloat64) + offset,
                         plain->predict(moved).mean.to(torch::kFloat64)),
            1e-3);
  // Checkpoints written before the option: absent from their JSON, it is off.
  auto json = config.to_json();
  json.erase("centre_per_task");
  EXPECT_FALSE(ModelConfig::from_json(json).centre_per_task);
}

// Sixty steps on one fixed batch of 16 GP tasks must lower the training objective on that batch
// (the joint -LL for joint models, else the marginal one) by this much. Measured for every kind
// (tests/measure-learning-spread.sh, 2026-12-01, AMD EPYC without AVX-512: OPENBLAS_CORETYPE
// unset (= Haswell here), Haswell, Sandybridge; OMP_NUM_THREADS 1 and 2; NPE_LEARNING_TEST_SEED
// 0, 1, 2; nine combinations): the drop is 0.246 (CNP) to 9.0 nats (TE-TNP-ND); at one seed the
// BLAS kernel and thread count move it by at most 0.011 (BSA-TNP), so 0.1 is 0.146 below the
// smallest drop, thirteen times that spread. A model that does not learn drops by 0
// (LearningCriterion below).
constexpr double kGpTrainingLossDrop = 0.1;

double gp_training_loss_drop(std::shared_ptr<NeuralProcessImpl> model, double learning_rate) {
  GpTaskGenerator generator;
  const testing::FixedBatch batch(generator, 16, 7 + testing::learning_seed());
  const double before = testing::training_loss(*model, batch.task());
  TrainOptions options;
  options.steps = 60;
  options.learning_rate = learning_rate;
  options.validation_tasks = 0;
  options.seed = testing::learning_seed();
  auto result = train_model(*model, batch, options);
  EXPECT_EQ(result.steps, 60);
  const double after = testing::training_loss(*model, batch.task());
  testing::report_learning("loss on the training batch", before, after);
  return before - after;
}

TEST_P(EveryModel, ShortTrainingRunLowersTheLoss) {
  torch::manual_seed(99 + testing::learning_seed());
  EXPECT_GT(gp_training_loss_drop(build(), 2e-3), kGpTrainingLossDrop);
}

// The criterion tells a model that does not learn from one that does: at the smallest learning
// rate training accepts (1e-6), 60 AdamW updates move each weight by about 6e-5, a loss drop of
// the order of 1e-4 nats against 0.246 or more at 2e-3.
TEST(LearningCriterion, FailsForAModelThatDoesNotLearn) {
  double smallest_rate = 0.0;
  for (const auto& field : describe_fields(TrainOptions{}.visit_fields())) {
    if (field.name == "learning_rate") smallest_rate = field.min.get<double>();
  }
  ASSERT_GT(smallest_rate, 0.0);
  torch::manual_seed(99);
  auto model = make_model(tiny_config("tnp"));
  EXPECT_LT(gp_training_loss_drop(model, smallest_rate), kGpTrainingLossDrop);
}

TEST_P(EveryModel, TrainingReportsProgressAndCanBeCancelled) {
  auto model = build();
  GpTaskGenerator generator;
  TrainOptions options;
  options.steps = 50;
  options.validation_tasks = 0;
  int64_t calls = 0;
  auto result = train_model(*model, generator, options, [&](const TrainingStatus& p) {
    ++calls;
    EXPECT_TRUE(std::isfinite(p.loss));
    return p.step < 3;
  });
  EXPECT_TRUE(result.cancelled);
  EXPECT_EQ(result.steps, 3);
  EXPECT_EQ(calls, 3);
}

INSTANTIATE_TEST_SUITE_P(Models, EveryModel, ::testing::ValuesIn(scattered_input_kinds()),
                         [](const auto& info) { return info.param; });

TEST(ModelRegistry, UnknownKindListsTheKnownOnes) {
  NPE_EXPECT_THROW_WITH(make_model(tiny_config("tnpx")), ConfigError, "known: cnp, rcnp");
}

// A checkpoint's metadata may be hostile: absurd sizes are refused before anything is allocated.
TEST(ModelRegistry, AbsurdSizesAreRefusedBeforeAllocating) {
  auto wide = tiny_config("tnp");
  wide.options<TransformerOptions>().dim_model = int64_t{1} << 40;
  NPE_EXPECT_THROW_WITH(make_model(wide), ResourceLimitError, "dim_model");
  auto huge = tiny_config("tetnp");
  huge.options<TransformerOptions>().dim_model = 8192;
  huge.options<TransformerOptions>().num_layers = 200;
  NPE_EXPECT_THROW_WITH(make_model(huge), ResourceLimitError, "million parameters");
  // Hostile place-feature counts are refused by name before any count adds them up.
  for (const int64_t features :
       {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    auto hostile = tiny_config("bsatnp");
    hostile.dim_features = features;
    NPE_EXPECT_THROW_WITH(make_model(hostile), ConfigError, "dim_features");
  }
  auto no_kernel = tiny_config("convcnp");
  no_kernel.options<ConvCnpOptions>().kernel_size = -3;
  EXPECT_THROW(make_model(no_kernel), ConfigError);
  for (const auto* size : {"small", "paper"}) {
    EXPECT_NO_THROW(make_model(default_model_config("tetnp", size))) << size;
  }
}

TEST(ModelRegistry, EveryKindHasInfo) {
  for (const auto& info : model_infos()) {
    EXPECT_FALSE(info.display_name.empty());
    EXPECT_FALSE(info.description.empty());
  }
  EXPECT_TRUE(model_info("tetnp").translation_equivariant);
  EXPECT_FALSE(model_info("tnp").translation_equivariant);
}

TEST(ModelRegistry, SizesAreConfiguration) {
  auto paper = default_model_config("tetnp", "paper");
  EXPECT_EQ(paper.options<TransformerOptions>().dim_model, 128);
  EXPECT_EQ(paper.options<TransformerOptions>().num_layers, 5);
  EXPECT_EQ(paper.options<TransformerOptions>().num_heads, 8);
  EXPECT_EQ(paper.options<TransformerOptions>().head_dim, 16);
  auto small = default_model_config("tetnp", "small");
  EXPECT_LT(small.options<TeAttentionOptions>().pairwise_width,
            paper.options<TeAttentionOptions>().pairwise_width);
  NPE_EXPECT_THROW_WITH(default_model_config("tetnp", "huge"), ConfigError, "unknown size");
}

TEST(ModelConfig, JsonRoundTripKeepsEveryField) {
  auto c = tiny_config("tepttnp", 3, 2);
  c.options<TeAttentionOptions>().update_locations = false;
  c.min_stddev = 0.01;
  auto back = ModelConfig::from_json(c.to_json());
  EXPECT_EQ(back.to_json(), c.to_json());
}

// The context's periodogram (context_spectrum.h): a clean sinusoid's period is found to within
// a percent and explains most of the variance; a shift leaves frequencies and weights as they
// were; a context of one point, or a constant one, has no peak; D_x = 2 gives each dimension
// its own peaks.
TEST(ContextSpectrum, FindsASinusoidsPeriodWhereverItIs) {
  torch::manual_seed(4);
  const double period = 0.7;
  const auto xc = torch::rand({3, 40, 1}) * 4.0 - 2.0;
  const auto yc = torch::sin(2.0 * M_PI / period * xc + 0.3) + 0.05 * torch::randn({3, 40, 1});
  const auto spectrum = context_spectrum(xc, yc, 2);
  ASSERT_EQ(spectrum.frequencies.sizes(), (std::vector<int64_t>{3, 1, 2}));
  for (int64_t b = 0; b < 3; ++b) {
    const double found = 2.0 * M_PI / spectrum.frequencies[b][0][0].item<double>();
    EXPECT_NEAR(found, period, 0.01 * period) << b;
    EXPECT_GT(spectrum.weights[b][0][0].item<double>(), 0.9) << b;
    EXPECT_LE(spectrum.weights[b][0][0].item<double>(), 1.0) << b;
    EXPECT_LT(spectrum.weights[b][0][1].item<double>(), spectrum.weights[b][0][0].item<double>());
  }
  const auto shifted = context_spectrum(xc + 1234.5, yc, 2);
  EXPECT_TRUE(torch::allclose(shifted.frequencies, spectrum.frequencies, 1e-3, 1e-4));
  EXPECT_TRUE(torch::allclose(shifted.weights, spectrum.weights, 1e-3, 1e-4));

  const auto one = context_spectrum(xc.narrow(1, 0, 1), yc.narrow(1, 0, 1), 2);
  EXPECT_EQ(one.weights.abs().sum().item<double>(), 0.0);
  const auto flat = context_spectrum(xc, torch::ones_like(yc), 2);
  EXPECT_EQ(flat.weights.abs().sum().item<double>(), 0.0);

  // Two dimensions, a period of 0.5 along the first and 2 along the second.
  const auto x2 = torch::rand({1, 200, 2}) * 4.0 - 2.0;
  const auto y2 = torch::sin(2.0 * M_PI / 0.5 * x2.select(2, 0)).unsqueeze(-1) +
                  torch::cos(2.0 * M_PI / 2.0 * x2.select(2, 1)).unsqueeze(-1);
  const auto both = context_spectrum(x2, y2, 1);
  EXPECT_NEAR(2.0 * M_PI / both.frequencies[0][0][0].item<double>(), 0.5, 0.01);
  EXPECT_NEAR(2.0 * M_PI / both.frequencies[0][1][0].item<double>(), 2.0, 0.06);
}

// distance_frequencies adds one bias-free layer and F learnt frequencies to each TE attention's
// rho and nothing else: without it (the default, every checkpoint written before it) a model's
// parameters are the paper's, so older checkpoints keep loading.
TEST(ModelConfig, DistanceFrequenciesAddLearntFourierFeaturesToRho) {
  auto plain = make_model(tiny_config("tetnp", 2, 1));
  auto config = tiny_config("tetnp", 2, 1);
  config.options<TeAttentionOptions>().distance_frequencies = 3;
  torch::manual_seed(3);
  auto fourier = make_model(config);
  int64_t extra = 0, layers = 0;
  for (const auto& item : fourier->named_parameters()) {
    const auto& name = item.key();
    const auto& p = item.value();
    if (name.find("rho_fourier") != std::string::npos) {
      EXPECT_EQ(p.sizes(), (std::vector<int64_t>{16, 2 * 2 * 3})) << name;  // width x 2 D_x F
      ++layers;
    }
    if (name.find("rho_frequencies") != std::string::npos ||
        name.find("rho_fourier") != std::string::npos) {
      extra += p.numel();
    }
  }
  ASSERT_GT(layers, 0);
  EXPECT_EQ(fourier->parameters().size(), plain->parameters().size() + 2 * size_t(layers));
  EXPECT_EQ(extra, layers * (16 * 12 + 3));
  for (const auto& item : plain->named_parameters()) {
    EXPECT_EQ(item.key().find("rho_f"), std::string::npos) << item.key();
  }
  // The frequencies are learnt: the likelihood's gradient reaches them.
  fourier->train();
  auto task = random_task(2, 6, 5, 2, 1);
  fourier->log_likelihood(task).mean().backward();
  for (const auto& item : fourier->named_parameters()) {
    if (item.key().find("rho_frequencies") == std::string::npos) continue;
    const auto grad = item.value().grad();
    ASSERT_TRUE(grad.defined()) << item.key();
    EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << item.key();
  }
  EXPECT_EQ(ModelConfig::from_json(config.to_json()).to_json(), config.to_json());
}

// place_features = "differences": the TE models see the place features (ERA5 elevation, land
// fraction) only as differences between places, like the coordinates, so adding a constant to
// a feature changes nothing, while with the default ("tokens") it does. A configuration
// without the field (every checkpoint written before it) reads as "tokens".
TEST(ModelConfig, PlaceFeaturesAsDifferencesAreTranslationInvariantInTheFeaturesToo) {
  auto task = random_task(2, 7, 5, 3, 1);
  auto raised = task;
  for (auto* x : {&raised.xc, &raised.xt}) {
    *x = x->clone();
    x->select(-1, 2) += 0.8;  // the last input is the place feature
  }
  for (const char* kind : {"tetnp", "tepttnp", "tetnpnd"}) {
    for (const std::string route : {"tokens", "differences"}) {
      auto config = tiny_config(kind, 3, 1);
      config.dim_features = 1;
      config.options<TeAttentionOptions>().place_features = route;
      torch::manual_seed(2);
      auto model = make_model(config);
      model->eval();
      torch::NoGradGuard no_grad;
      const auto change = max_abs_diff(model->predict(task).mean, model->predict(raised).mean);
      if (route == "differences") {
        EXPECT_LT(change, 1e-4) << kind;
      } else {
        EXPECT_GT(change, 1e-3) << kind;
      }
      // Still translation equivariant in the coordinates.
      const auto moved = task.translated({1.5, -2.0, 0.0});
      EXPECT_LT(max_abs_diff(model->predict(task).mean, model->predict(moved).mean), 1e-4)
          << kind << " " << route;
      EXPECT_EQ(ModelConfig::from_json(config.to_json()).to_json(), config.to_json());
    }
  }
  auto json = tiny_config("tepttnp", 3, 1).to_json();
  json.erase("place_features");
  EXPECT_EQ(ModelConfig::from_json(json).options<TeAttentionOptions>().place_features, "tokens");
}

TEST(Attention, TargetAttentionIsReportedForAttentionModels) {
  torch::manual_seed(1);
  auto task = random_task(1, 5, 3);
  int models_with_attention = 0;
  for (const auto& info : model_infos()) {
    if (!info.attention) continue;
    ++models_with_attention;
    const auto& kind = info.kind;
    auto model = make_model(tiny_config(kind));
    torch::NoGradGuard no_grad;
    auto weights = model->target_attention(task);
    ASSERT_TRUE(weights.defined()) << kind;
    EXPECT_EQ(weights.sizes(), (std::vector<int64_t>{1, 3, 5})) << kind;
    // Softmax weights of each head sum to 1; summed over heads they sum to the head count.
    EXPECT_LT(max_abs_diff(weights.sum(-1), torch::full({1, 3}, 2.0)), 1e-5) << kind;
  }
  EXPECT_GE(models_with_attention, 3);  // tnp, tetnp, bsatnp
  auto cnp = make_model(tiny_config("cnp"));
  EXPECT_FALSE(cnp->target_attention(task).defined());
}

}  // namespace
}  // namespace npe

#include "npe/models/flops.h"

namespace npe {
namespace {

TEST(Flops, MatchAHandCountForATinyCnp) {
  ModelConfig c = default_model_config("cnp", "small");
  c.options<TokenOptions>().dim_model = 2;
  // Encoder 2->2 (x5 hidden) ->2 on one point: 6 products of 2x2 = 48 FLOPs.
  // Head [r, x] 3->2->2->2 on one target: 12 + 8 + 8 = 28 FLOPs.
  EXPECT_DOUBLE_EQ(forward_flops(c, {1, 1, 1, 1.0}), 76.0);
  EXPECT_DOUBLE_EQ(forward_flops(c, {3, 1, 1, 1.0}), 3 * 76.0);
}

TEST(Flops, GrowWithTheQuadraticTermsOfAttention) {
  auto tnp = default_model_config("tnp", "paper");
  // Without targets only self-attention remains, whose score terms are quadratic in Nc.
  BatchShape context_only{1, 256, 0, 6.0}, double_context{1, 512, 0, 6.0};
  EXPECT_GT(forward_flops(tnp, double_context), 2.0 * forward_flops(tnp, context_only));
  BatchShape large{16, 64, 128, 6.0};
  auto tetnp = default_model_config("tetnp", "paper");
  EXPECT_GT(forward_flops(tetnp, large), 5.0 * forward_flops(tnp, large));
  EXPECT_DOUBLE_EQ(training_step_flops(tnp, large), 3.0 * forward_flops(tnp, large));
  for (const auto& info : model_infos()) {
    EXPECT_GT(
        forward_flops(default_model_config(info.kind, "small", info.kind == "convcnp2d" ? 2 : 1),
                      large),
        0.0)
        << info.kind;
  }
}

}  // namespace
}  // namespace npe
