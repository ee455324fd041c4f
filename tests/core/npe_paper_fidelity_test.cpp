// Where the models follow the paper (Ashman et al., 2024, Section 3 and Appendix F.1): each test
// pins one departure that used to exist, and would fail if it came back.

#include "npe/data/era5_tasks.h"
#include "npe/models/model_registry.h"
#include "npe/models/modules.h"
#include "npe/models/task_presets.h"
#include "npe/predictors/equivariance.h"
#include "npe/predictors/predictor_registry.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::max_abs_diff;
using testing::random_task;
using testing::tiny_config;

bool has_parameter(torch::nn::Module& module, const std::string& name) {
  return module.named_parameters().contains(name);
}

bool has_parameter_prefix(torch::nn::Module& module, const std::string& prefix) {
  for (const auto& item : module.named_parameters()) {
    if (item.key().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// F.1: "an MLP with two hidden layers of dimension D_z" embeds the tokens of every TNP variant.
TEST(PaperFidelity, TokenEmbeddersHaveTwoHiddenLayersOfWidthDz) {
  for (const std::string kind : {"tnp", "pttnp", "tetnp", "tepttnp"}) {
    auto config = tiny_config(kind);
    auto model = make_model(config);
    EXPECT_TRUE(has_parameter(*model, "embed.linear2.weight")) << kind;
    EXPECT_FALSE(has_parameter(*model, "embed.linear3.weight")) << kind;
    for (const char* hidden : {"embed.linear0.weight", "embed.linear1.weight"}) {
      EXPECT_EQ(model->named_parameters()[hidden].size(0),
                config.options<TransformerOptions>().dim_model)
          << kind;
    }
  }
}

// Eq. 10: phi acts on the attention weights alpha (after the softmax). Adding the same constant
// to every logit of a query leaves alpha, and so the location update, unchanged; phi acting on
// the logits would move the locations.
TEST(PaperFidelity, LocationUpdateActsOnPostSoftmaxWeights) {
  torch::manual_seed(3);
  TeMultiHeadAttention attention(8, 2, 4, 1, 16, 0, true);
  auto zq = torch::randn({1, 5, 8}), zk = torch::randn({1, 7, 8});
  auto xq = torch::randn({1, 5, 1}), xk = torch::randn({1, 7, 1});
  torch::NoGradGuard no_grad;
  auto before = attention->forward(zq, xq, zk, xk);
  EXPECT_GT(max_abs_diff(before.x, xq), 1e-4);  // the update does something
  attention->named_parameters()["rho_out.bias"].add_(3.0);
  auto after = attention->forward(zq, xq, zk, xk);
  EXPECT_LT(max_abs_diff(after.x, before.x), 1e-5);
  EXPECT_LT(max_abs_diff(after.z, before.z), 1e-5);
}

// F.1: "The initial pseudo-tokens and pseudo-input-locations are sampled from a standard normal."
TEST(PaperFidelity, TePtTnpPseudoLocationsStartStandardNormal) {
  torch::manual_seed(5);
  auto config = tiny_config("tepttnp");
  config.options<PseudoTokenOptions>().num_pseudo_tokens = 1024;
  auto model = make_model(config);
  auto offsets = model->named_parameters()["pseudo_offsets"];
  EXPECT_NEAR(offsets.std().item<double>(), 1.0, 0.08);
  EXPECT_NEAR(model->named_parameters()["pseudo_tokens"].std().item<double>(), 1.0, 0.08);
}

// The configuration's fields as another kind's: the fields both kinds have keep their values.
nlohmann::json with_kind(const ModelConfig& config, const std::string& kind) {
  auto json = config.to_json();
  json["kind"] = kind;
  return json;
}

// The last layer's context update (and target location update) would never be read: the
// pseudo-token models do not compute it, TE-TNP's last cross-attention has no location update.
TEST(PaperFidelity, LastLayerComputesNoUnusedUpdates) {
  auto config = tiny_config("tepttnp");
  config.options<TransformerOptions>().num_layers = 2;
  auto tepttnp = make_model(config);
  EXPECT_TRUE(has_parameter_prefix(*tepttnp, "context_from_pseudo0."));
  EXPECT_FALSE(has_parameter_prefix(*tepttnp, "context_from_pseudo1."));
  EXPECT_TRUE(has_parameter_prefix(*tepttnp, "target_from_pseudo0.attention.phi."));
  EXPECT_FALSE(has_parameter_prefix(*tepttnp, "target_from_pseudo1.attention.phi."));
  auto pttnp = make_model(ModelConfig::from_json(with_kind(config, "pttnp")));
  EXPECT_TRUE(has_parameter_prefix(*pttnp, "context_from_pseudo0."));
  EXPECT_FALSE(has_parameter_prefix(*pttnp, "context_from_pseudo1."));
  auto tetnp = make_model(ModelConfig::from_json(with_kind(config, "tetnp")));
  EXPECT_TRUE(has_parameter_prefix(*tetnp, "cross0.attention.phi."));
  EXPECT_FALSE(has_parameter_prefix(*tetnp, "cross1.attention.phi."));
  // Every remaining parameter is used: one backward pass reaches all of them.
  for (auto& model : {tepttnp, pttnp, tetnp}) {
    auto task = random_task(2, 6, 5);
    auto prediction = model->predict(task);
    (prediction.mean.sum() + prediction.stddev.sum()).backward();
    for (const auto& item : model->named_parameters()) {
      ASSERT_TRUE(item.value().grad().defined()) << model->config().kind << " " << item.key();
    }
  }
}

// The authors' code shares each TE-TNP layer's weights between the context self-attention and
// the target cross-attention; both variants exist, and both are equivariant.
TEST(PaperFidelity, TeTnpLayerWeightsCanBeShared) {
  auto separate_config = tiny_config("tetnp");
  auto shared_config = separate_config;
  shared_config.options<LayerSharingOptions>().share_layer_weights = true;
  auto separate = make_model(separate_config);
  auto shared = make_model(shared_config);
  EXPECT_TRUE(has_parameter_prefix(*separate, "self0."));
  EXPECT_FALSE(has_parameter_prefix(*shared, "self0."));
  auto count = [](torch::nn::Module& m) {
    int64_t n = 0;
    for (const auto& p : m.parameters()) n += p.numel();
    return n;
  };
  EXPECT_LT(count(*shared), count(*separate));
  EXPECT_TRUE(ModelConfig::from_json(shared_config.to_json())
                  .options<LayerSharingOptions>()
                  .share_layer_weights);
  shared->eval();
  auto predictor = wrap_model(shared);
  TaskBatch batch{random_task(2, 8, 6).to(torch::kCPU, torch::kFloat64), {}};
  auto scale = std::max(1.0, predictor->predict(batch).mean.abs().max().item<double>());
  EXPECT_LT(equivariance_error(*predictor, batch, {7.5}) / scale, 1e-4);
}

// F.4: "For all models, we use an embedding / token size of D_z = 32" on ERA5, with M = 128
// pseudo-tokens (the paper size once kept the 1-D D_z = 128). The pairwise MLPs are D_z wide as
// in F.1.
TEST(PaperFidelity, Era5PaperSizeHasDz32AndM128) {
  for (const std::string kind : {"pttnp", "tepttnp", "tetnp"}) {
    auto config = default_model_config(kind, "paper", 5, 1);
    apply_era5_size_preset(config, "paper");
    EXPECT_EQ(config.options<TransformerOptions>().dim_model, 32) << kind;
    if (kind != "tetnp") {
      EXPECT_EQ(config.options<PseudoTokenOptions>().num_pseudo_tokens, 128) << kind;
    }
    if (kind != "pttnp") {
      EXPECT_EQ(config.options<TeAttentionOptions>().pairwise_width, 32) << kind;
    }
    // The model built from it has D_z-wide tokens.
    auto model = make_model(config);
    EXPECT_EQ(model->named_parameters()["embed.linear0.weight"].size(0), 32) << kind;
  }
}

}  // namespace
}  // namespace npe
