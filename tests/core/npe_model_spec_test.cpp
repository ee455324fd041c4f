// Each model kind's specification (model_spec.h): its options are exactly what it reads, so a
// checkpoint that records only them rebuilds the same model; the registry answers from the
// specifications alone.

#include <fstream>

#include "npe/data/image_tasks.h"
#include "npe/models/checkpoint.h"
#include "npe/models/flops.h"
#include "npe/models/model_options.h"
#include "npe/models/model_registry.h"
#include "test_support.h"

namespace npe {
namespace {

using testing::max_abs_diff;
using testing::tiny_config;

// A task the kind accepts: whole-cell coordinates for on-grid models.
Task task_for(const ModelInfo& info, int64_t dim_x) {
  torch::manual_seed(3);
  auto inputs = [&](int64_t n) {
    return info.on_grid ? torch::randint(0, 6, {2, n, dim_x}).to(torch::kFloat)
                        : torch::rand({2, n, dim_x}) * 4 - 2;
  };
  return {inputs(5), torch::randn({2, 5, 1}), inputs(7), torch::randn({2, 7, 1})};
}

std::shared_ptr<NeuralProcessImpl> seeded_model(const ModelConfig& config) {
  torch::manual_seed(7);
  auto model = make_model(config);
  model->eval();
  return model;
}

// A kind reads only its own option groups (ModelConfig::options throws for any other), so what
// its checkpoint records rebuilds the same model: parameters, outputs and FLOP count.
TEST(ModelSpecs, ACheckpointsRecordRebuildsTheSameModel) {
  for (const auto& info : model_infos()) {
    SCOPED_TRACE(info.kind);
    const int64_t dim_x = info.on_grid ? 2 : 1;
    const auto config = tiny_config(info.kind, dim_x);
    const auto own = config.to_json();
    const auto rebuilt = ModelConfig::from_json(own);
    EXPECT_EQ(rebuilt.to_json(), own);

    auto reference = seeded_model(config);
    const auto task = task_for(info, dim_x);
    torch::NoGradGuard no_grad;
    const auto expected = reference->predict(task);
    auto model = seeded_model(rebuilt);
    const auto a = reference->named_parameters(), b = model->named_parameters();
    ASSERT_EQ(a.size(), b.size());
    for (const auto& p : a) {
      ASSERT_TRUE(b.contains(p.key())) << p.key();
      ASSERT_EQ(p.value().sizes(), b[p.key()].sizes()) << p.key();
    }
    const auto got = model->predict(task);
    EXPECT_LT(max_abs_diff(got.mean, expected.mean), 1e-6);
    EXPECT_LT(max_abs_diff(got.stddev, expected.stddev), 1e-6);
    EXPECT_LT(max_abs_diff(model->log_likelihood(task), reference->log_likelihood(task)), 1e-5);
    const BatchShape shape{4, 64, 128, 6.0};
    EXPECT_DOUBLE_EQ(forward_flops(rebuilt, shape), forward_flops(config, shape));
  }
}

// A kind's parameter count (what make_model refuses too large a model by, before allocating)
// is the number its model has, for every size and every option that changes a module: more
// inputs and outputs, place features, homoscedastic noise, no location update, shared layers,
// distance frequencies, features as differences, low-rank covariance, pseudo-locations from the
// context mean, a time coordinate.
TEST(ModelSpecs, TheParameterCountIsTheModelsForEverySizeAndOption) {
  auto variants = [](const ModelInfo& info) {
    const int64_t dim_x = info.on_grid ? 2 : 1;
    std::vector<ModelConfig> configs = {tiny_config(info.kind, dim_x)};
    for (const auto& size : model_sizes())
      configs.push_back(default_model_config(info.kind, size, dim_x));
    auto wider = tiny_config(info.kind, info.kind == "convcnp" ? 1 : dim_x + 2);
    wider.dim_y = 3;
    wider.heteroscedastic = false;
    if (info.place_features && info.kind != "convcnp") wider.dim_features = 1;
    configs.push_back(wider);
    auto changed = tiny_config(info.kind, dim_x + 1);
    if (auto* te = changed.find_options<TeAttentionOptions>()) {
      te->update_locations = false;
      te->distance_frequencies = 3;
    }
    if (auto* sharing = changed.find_options<LayerSharingOptions>())
      sharing->share_layer_weights = true;
    if (auto* pseudo = changed.find_options<PseudoLocationOptions>())
      pseudo->pseudo_locations = "context_mean";
    if (auto* covariance = changed.find_options<CovarianceOptions>()) {
      covariance->covariance = "lowrank";
      covariance->covariance_layers = 3;
    }
    if (auto* bias = changed.find_options<AttentionBiasOptions>()) bias->time_bias_features = 2;
    if (info.kind != "convcnp") configs.push_back(changed);
    if (info.kind == "tetnp" || info.kind == "tetnpnd") {
      auto spectral = tiny_config(info.kind, dim_x + 1);
      spectral.options<TeAttentionOptions>().context_frequencies = 3;
      configs.push_back(spectral);
    }
    if (info.place_features && info.kind != "convcnp") {
      auto differences = tiny_config(info.kind, dim_x + 2);
      differences.dim_features = 2;
      if (auto* te = differences.find_options<TeAttentionOptions>())
        te->place_features = "differences";
      configs.push_back(differences);
    }
    return configs;
  };
  for (const auto& info : model_infos()) {
    for (const auto& config : variants(info)) {
      SCOPED_TRACE(info.kind + " " + config.to_json().dump());
      auto model = make_model(config);
      int64_t parameters = 0;
      for (const auto& p : model->parameters()) parameters += p.numel();
      EXPECT_EQ(int64_t(model_spec(info.kind).parameter_count(config)), parameters);
    }
  }
}

// Every option a kind has is described (type, help, range or choices) by the same list that
// writes and reads it, and its default lies in its range.
TEST(ModelSpecs, EveryOptionIsDescribedWithARangeAndItsDefaultIsInIt) {
  for (const auto& info : model_infos()) {
    SCOPED_TRACE(info.kind);
    const ModelConfig config(info.kind);
    const auto json = options_to_json(*config.all_options());
    const auto described = describe_options(*config.all_options());
    ASSERT_EQ(described.size(), json.size());
    for (const auto& field : described) {
      SCOPED_TRACE(field.name);
      EXPECT_TRUE(json.contains(field.name));
      EXPECT_EQ(field.default_value, json.at(field.name));
      EXPECT_FALSE(field.help.empty());
      if (field.type == "integer" || field.type == "number") {
        EXPECT_LE(field.min.get<double>(), field.default_value.get<double>());
        EXPECT_LE(field.default_value.get<double>(), field.max.get<double>());
      } else if (field.type == "choice") {
        EXPECT_GE(field.choices.size(), 2u);
      } else {
        EXPECT_EQ(field.type, "boolean");
      }
    }
    EXPECT_NO_THROW(check_option_ranges(*config.all_options()));
  }
}

// Out-of-range values are refused when the model is built: below the minimum or not a choice
// as a configuration error, above the ceiling as a resource limit (hostile metadata).
TEST(ModelSpecs, OptionsOutsideTheirRangesAreRefused) {
  auto few = tiny_config("tnp");
  few.options<TransformerOptions>().num_heads = 0;
  NPE_EXPECT_THROW_WITH(make_model(few), ConfigError, "num_heads must be >= 1");
  auto many = tiny_config("tepttnp");
  many.options<PseudoTokenOptions>().num_pseudo_tokens = 1 << 20;
  NPE_EXPECT_THROW_WITH(make_model(many), ResourceLimitError, "num_pseudo_tokens = 1048576");
  auto unknown = tiny_config("tepttnp");
  unknown.options<PseudoLocationOptions>().pseudo_locations = "median";
  NPE_EXPECT_THROW_WITH(make_model(unknown), ConfigError,
                        "pseudo_locations must be 'attention' or 'context_mean', not 'median'");
  auto coarse = tiny_config("convcnp");
  coarse.options<ConvCnpOptions>().points_per_unit = std::nan("");
  NPE_EXPECT_THROW_WITH(make_model(coarse), ConfigError, "points_per_unit must be a number");
}

// A group the kind does not have is an error naming the kind, not a default; and a
// configuration whose kind was changed after it was made is refused, not built with another
// kind's options.
TEST(ModelSpecs, AnotherKindsOptionGroupIsRefused) {
  auto tnp = tiny_config("tnp");
  EXPECT_EQ(tnp.find_options<ConvCnpOptions>(), nullptr);
  NPE_EXPECT_THROW_WITH(tnp.options<ConvCnpOptions>(), ConfigError, "tnp model has no");
  tnp.kind = "tetnp";
  NPE_EXPECT_THROW_WITH(make_model(tnp), ConfigError, "not those of the TE-TNP model");
  EXPECT_THROW(ModelConfig("tnpx"), ConfigError);
}

// A size preset applies each field to every kind whose groups have it (dim_model: the CNPs'
// tokens and every transformer; conv_channels: both ConvCNPs) and leaves the others alone; an
// out-of-range value is refused where every configuration's is, by make_model.
TEST(ModelSpecs, SizePresetsSetEachFieldWhereAKindHasIt) {
  SizePreset preset;
  preset.dim_model = 8;
  preset.num_layers = 1;
  preset.conv_channels = 12;
  auto convcnp = ModelConfig("convcnp");
  const auto before = convcnp.to_json();
  SizePreset transformer_only;
  transformer_only.dim_model = 8;
  transformer_only.num_layers = 1;
  transformer_only.apply_to(convcnp);
  EXPECT_EQ(convcnp.to_json(), before);
  preset.apply_to(convcnp);
  EXPECT_EQ(convcnp.options<ConvCnpOptions>().conv_channels, 12);
  auto convcnp2d = ModelConfig("convcnp2d");
  preset.apply_to(convcnp2d);
  EXPECT_EQ(convcnp2d.options<ConvCnp2dOptions>().conv_channels, 12);
  auto cnp = ModelConfig("cnp");
  preset.apply_to(cnp);
  EXPECT_EQ(cnp.options<TokenOptions>().dim_model, 8);
  auto tepttnp = ModelConfig("tepttnp");
  preset.apply_to(tepttnp);
  EXPECT_EQ(tepttnp.options<TransformerOptions>().dim_model, 8);
  EXPECT_EQ(tepttnp.options<TransformerOptions>().num_layers, 1);
  EXPECT_EQ(tepttnp.options<TeAttentionOptions>().pairwise_width,
            TeAttentionOptions{}.pairwise_width);  // not in this preset
  SizePreset absurd;
  absurd.num_layers = 0;
  absurd.apply_to(tepttnp);
  NPE_EXPECT_THROW_WITH(make_model(tepttnp), ConfigError, "num_layers");
}

// Checkpoints of format 2 before the options were typed record every kind's fields (26 of
// them): each kind takes its own and ignores the rest.
TEST(ModelSpecs, MetadataListingEveryKindsFieldsStillLoads) {
  const auto old = nlohmann::json::parse(R"({
    "kind": "tetnp", "dim_x": 1, "dim_y": 1, "dim_features": 0, "dim_model": 64,
    "num_layers": 3, "num_heads": 4, "head_dim": 16, "pairwise_width": 32,
    "update_locations": true, "share_layer_weights": false, "num_pseudo_tokens": 16,
    "pseudo_locations": "attention", "heteroscedastic": true, "min_stddev": 0.001,
    "points_per_unit": 64.0, "conv_channels": 32, "kernel_size": 9, "unet_depth": 5,
    "cnn_layers": 5, "input_scale": 1.0, "max_grid_points": 262144, "covariance": "cholesky",
    "covariance_layers": 2, "projection_layers": 4, "projection_dim": 20,
    "num_permutations": 1, "bias_features": 5, "time_bias_features": 0})");
  const auto config = ModelConfig::from_json(old);
  EXPECT_EQ(config.options<TransformerOptions>().dim_model, 64);
  EXPECT_EQ(config.options<TeAttentionOptions>().pairwise_width, 32);
  const auto recorded = config.to_json();
  EXPECT_FALSE(recorded.contains("conv_channels"));
  EXPECT_FALSE(recorded.contains("num_pseudo_tokens"));
  // Written before distance_frequencies, context_frequencies and place_features existed: it
  // loads as the paper's rho, with place features (if any) in the tokens.
  EXPECT_EQ(config.options<TeAttentionOptions>().distance_frequencies, 0);
  EXPECT_EQ(config.options<TeAttentionOptions>().context_frequencies, 0);
  EXPECT_EQ(config.options<TeAttentionOptions>().place_features, "tokens");
  EXPECT_EQ(recorded.size(), 8u + 10u);  // the common fields and TE-TNP's ten options
  EXPECT_FALSE(config.centre_per_task);  // written before it existed: off
  EXPECT_EQ(ModelConfig::from_json(recorded).to_json(), recorded);
}

TEST(ModelSpecs, AModelOptionOfAnotherKindIsRefusedByName) {
  auto json = default_model_config("tepttnp", "small").to_json();
  EXPECT_FALSE(json.contains("conv_channels"));
  EXPECT_FALSE(json.contains("cnn_layers"));
  set_model_option(json, "num_pseudo_tokens", 64);
  EXPECT_EQ(ModelConfig::from_json(json).options<PseudoTokenOptions>().num_pseudo_tokens, 64);
  NPE_EXPECT_THROW_WITH(set_model_option(json, "conv_channels", 64), ConfigError,
                        "TE-PT-TNP model has no setting 'conv_channels'");
}

class ModelSpecCheckpoints : public testing::TemporaryFolderTest {};

TEST_F(ModelSpecCheckpoints, NewCheckpointsRecordOnlyTheirModelsOptions) {
  auto model = make_model(tiny_config("convcnp"));
  CheckpointMetadata metadata;
  metadata.model = model->config();
  const auto recorded = metadata.to_json()["model"];
  EXPECT_TRUE(recorded.contains("unet_depth"));
  EXPECT_FALSE(recorded.contains("num_pseudo_tokens"));
  EXPECT_FALSE(recorded.contains("pairwise_width"));
  const auto path = dir / "convcnp.pt";
  save_checkpoint(path, *model, metadata);
  const auto loaded = load_checkpoint(path);
  EXPECT_EQ(loaded.metadata.model.to_json(), recorded);
}

TEST(ModelSpecs, TasksAdaptModelsByCapabilityNotByName) {
  auto bsa = default_model_config("bsatnp", "small", 3, 1);
  declare_time_coordinate(bsa);
  EXPECT_EQ(bsa.options<AttentionBiasOptions>().time_bias_features, 3);
  auto te = default_model_config("tetnp", "small", 3, 1);
  const auto before = te.to_json();
  declare_time_coordinate(te);
  EXPECT_EQ(te.to_json(), before);
  EXPECT_EQ(
      default_model_config("convcnp2d", "paper", 2, 1).options<ConvCnp2dOptions>().conv_channels,
      64);
  EXPECT_EQ(default_model_config("convcnp", "paper").options<ConvCnpOptions>().conv_channels, 128);
}

// The medium size is the small one with the paper's transformer (5 layers of 8 heads x 16), on
// every task: a task's own small widths (the images' D_z = 32, pairwise width 16) stay, and a
// kind without a transformer is as small. An unknown size is refused by name.
TEST(ModelSpecs, TheMediumSizeIsSmallWithThePapersTransformer) {
  EXPECT_EQ(model_sizes(), (std::vector<std::string>{"small", "medium", "paper"}));
  const ImageTaskSource images(ImageTaskConfig{});
  const auto small = default_model_config("tepttnp", "small", images);
  const auto medium = default_model_config("tepttnp", "medium", images);
  EXPECT_EQ(medium.options<TransformerOptions>().num_layers, 5);
  EXPECT_EQ(medium.options<TransformerOptions>().num_heads, 8);
  EXPECT_EQ(medium.options<TransformerOptions>().head_dim, 16);
  EXPECT_NE(small.options<TransformerOptions>().num_layers,
            medium.options<TransformerOptions>().num_layers);
  EXPECT_EQ(medium.options<TransformerOptions>().dim_model,
            small.options<TransformerOptions>().dim_model);
  EXPECT_EQ(medium.options<TeAttentionOptions>().pairwise_width,
            small.options<TeAttentionOptions>().pairwise_width);
  EXPECT_EQ(medium.options<PseudoTokenOptions>().num_pseudo_tokens,
            small.options<PseudoTokenOptions>().num_pseudo_tokens);
  EXPECT_EQ(medium.input_scale, small.input_scale);
  const auto one_d = default_model_config("tetnp", "medium");
  EXPECT_EQ(one_d.options<TransformerOptions>().num_layers, 5);
  EXPECT_EQ(one_d.options<TeAttentionOptions>().pairwise_width,
            default_model_config("tetnp", "small").options<TeAttentionOptions>().pairwise_width);
  EXPECT_EQ(default_model_config("convcnp", "medium").to_json(),
            default_model_config("convcnp", "small").to_json());
  try {
    default_model_config("tetnp", "huge");
    FAIL() << "an unknown size was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("medium"), std::string::npos) << e.what();
  }
}

// A configuration set field by field is recognised as the named size it makes up (what
// `npe train --model-option ...` and resumed jobs record), and only then.
TEST(ModelSizes, OptionsThatMakeUpAPresetAreNamedByIt) {
  const ImageTaskSource images(ImageTaskConfig{});
  for (const auto& size : model_sizes()) {
    EXPECT_EQ(matching_model_size(default_model_config("tepttnp", size, images), images), size);
  }
  auto config = default_model_config("tepttnp", "small", images);
  config.options<TransformerOptions>().num_layers = 5;
  config.options<TransformerOptions>().num_heads = 8;
  config.options<TransformerOptions>().head_dim = 16;
  EXPECT_EQ(matching_model_size(config, images), "medium");
  // Options the sizes do not differ in are choices on top of a size: a σ per pixel at the
  // medium size is still the medium size (`npe train --size medium --model-option
  // heteroscedastic=true`).
  auto heteroscedastic = nlohmann::json(config.to_json());
  heteroscedastic["heteroscedastic"] = true;
  EXPECT_EQ(matching_model_size(ModelConfig::from_json(heteroscedastic), images), "medium");
  config.options<TransformerOptions>().num_layers = 7;
  EXPECT_EQ(matching_model_size(config, images), "custom");
}

// Every shipped checkpoint, whatever format version wrote it, loads and predicts what it predicted
// when it shipped (tests/data/shipped_predictions.json, written by `npe predict` of that code).
TEST(ShippedCheckpoints, PredictAsWhenTheyWereShipped) {
  std::ifstream in(std::string(NPE_TEST_DATA_DIR) + "/shipped_predictions.json");
  ASSERT_TRUE(in) << "tests/data/shipped_predictions.json is missing";
  const auto expected = nlohmann::json::parse(in);
  ASSERT_GE(expected.at("checkpoints").size(), 20u);
  auto tensor = [](const nlohmann::json& rows) {
    std::vector<float> flat;
    for (const auto& row : rows)
      for (const auto& v : row) flat.push_back(v.get<float>());
    return torch::tensor(flat).view({1, int64_t(rows.size()), int64_t(rows[0].size())});
  };
  for (const auto& entry : expected.at("checkpoints")) {
    const auto path = entry.at("path").get<std::string>();
    SCOPED_TRACE(path);
    const auto loaded = load_checkpoint(std::string(NPE_SHIPPED_MODELS_DIR) + "/" + path);
    ASSERT_EQ(loaded.metadata.created_at, entry.at("created_at").get<std::string>())
        << "retrained since its predictions were written: run "
           "tests/data/write_shipped_predictions.py with this commit's npe";
    loaded.model->eval();
    torch::NoGradGuard no_grad;
    const Task task{tensor(entry.at("xc")), tensor(entry.at("yc")), tensor(entry.at("xt")), {}};
    const auto got = loaded.model->predict(task);
    // npe predict writes 9 significant digits, but the file may come from another CPU kind:
    // OpenBLAS and oneDNN pick other kernels on AVX2 and AVX-512 machines and sum in another
    // order (TNP-A's and TNP-D's means moved by up to 1.5e-5 between the two). A checkpoint read
    // wrongly moves predictions by far more than 1e-4.
    EXPECT_TRUE(torch::allclose(got.mean.to(torch::kFloat64),
                                tensor(entry.at("mean")).to(torch::kFloat64), 1e-4, 1e-4));
    EXPECT_TRUE(torch::allclose(got.stddev.to(torch::kFloat64),
                                tensor(entry.at("std")).to(torch::kFloat64), 1e-4, 1e-4));
  }
}

}  // namespace
}  // namespace npe
