// Each model kind's specification (model_spec.h): its options are exactly what it reads, so a
// checkpoint that records only them rebuilds the same model; the registry answers from the
// specifications alone.

#include "npe/data/image_tasks.h"
#include "npe/models/checkpoint.h"
#include "npe/models/flops.h"
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

// `json` with every field outside `kept` changed to another valid value.
nlohmann::json with_other_fields_changed(nlohmann::json json, const nlohmann::json& kept,
                                         int64_t dim_coordinates) {
  for (auto& [name, value] : json.items()) {
    if (kept.contains(name)) continue;
    if (name == "time_bias_features" && dim_coordinates < 2) continue;  // needs a time axis
    if (value.is_boolean()) {
      value = !value.get<bool>();
    } else if (value.is_number_integer()) {
      value = value.get<int64_t>() + 2;  // kernel sizes stay odd
    } else if (value.is_number_float()) {
      value = value.get<double>() * 1.5;
    } else if (name == "covariance") {
      value = value == "cholesky" ? "lowrank" : "cholesky";
    } else if (name == "pseudo_locations") {
      value = value == "attention" ? "context_mean" : "attention";
    } else {
      ADD_FAILURE() << "no other value for the field " << name;
    }
  }
  return json;
}

std::shared_ptr<NeuralProcessImpl> seeded_model(const ModelConfig& config) {
  torch::manual_seed(7);
  auto model = make_model(config);
  model->eval();
  return model;
}

// Fails for a kind whose options list misses a field it reads: changing that field (which a
// checkpoint would then not record) changes the model's parameters, outputs or FLOP count.
TEST(ModelSpecs, ACheckpointRecordsEveryOptionItsModelReads) {
  for (const auto& info : model_infos()) {
    SCOPED_TRACE(info.kind);
    const int64_t dim_x = info.on_grid ? 2 : 1;
    const auto config = tiny_config(info.kind, dim_x);
    const auto own = model_options_json(config);
    const auto other = ModelConfig::from_json(
        with_other_fields_changed(config.to_json(), own, config.dim_coordinates()));
    ASSERT_NE(other.to_json(), config.to_json());
    const auto rebuilt = ModelConfig::from_json(own);
    EXPECT_EQ(model_options_json(rebuilt), own);

    auto reference = seeded_model(config);
    const auto task = task_for(info, dim_x);
    torch::NoGradGuard no_grad;
    const auto expected = reference->predict(task);
    const auto expected_ll = reference->log_likelihood(task);
    for (const auto& variant : {rebuilt, other}) {
      auto model = seeded_model(variant);
      const auto a = reference->named_parameters(), b = model->named_parameters();
      ASSERT_EQ(a.size(), b.size());
      for (const auto& p : a) {
        ASSERT_TRUE(b.contains(p.key())) << p.key();
        ASSERT_EQ(p.value().sizes(), b[p.key()].sizes()) << p.key();
      }
      const auto got = model->predict(task);
      EXPECT_LT(max_abs_diff(got.mean, expected.mean), 1e-6);
      EXPECT_LT(max_abs_diff(got.stddev, expected.stddev), 1e-6);
      EXPECT_LT(max_abs_diff(model->log_likelihood(task), expected_ll), 1e-5);
      const BatchShape shape{4, 64, 128, 6.0};
      EXPECT_DOUBLE_EQ(forward_flops(variant, shape), forward_flops(config, shape));
    }
  }
}

TEST(ModelSpecs, AModelOptionOfAnotherKindIsRefusedByName) {
  auto json = model_options_json(default_model_config("tepttnp", "small"));
  EXPECT_FALSE(json.contains("conv_channels"));
  EXPECT_FALSE(json.contains("cnn_layers"));
  set_model_option(json, "num_pseudo_tokens", 64);
  EXPECT_EQ(ModelConfig::from_json(json).num_pseudo_tokens, 64);
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
  EXPECT_EQ(model_options_json(loaded.metadata.model), recorded);
}

TEST(ModelSpecs, TasksAdaptModelsByCapabilityNotByName) {
  auto bsa = default_model_config("bsatnp", "small", 3, 1);
  declare_time_coordinate(bsa);
  EXPECT_EQ(bsa.time_bias_features, 3);
  auto te = default_model_config("tetnp", "small", 3, 1);
  const auto before = te.to_json();
  declare_time_coordinate(te);
  EXPECT_EQ(te.to_json(), before);
  EXPECT_EQ(default_model_config("convcnp2d", "paper", 2, 1).conv_channels, 64);
  EXPECT_EQ(default_model_config("convcnp", "paper").conv_channels, 128);
}

// The medium size is the small one with the paper's transformer (5 layers of 8 heads x 16), on
// every task: a task's own small widths (the images' D_z = 32, pairwise width 16) stay, and a
// kind without a transformer is as small. An unknown size is refused by name.
TEST(ModelSpecs, TheMediumSizeIsSmallWithThePapersTransformer) {
  EXPECT_EQ(model_sizes(), (std::vector<std::string>{"small", "medium", "paper"}));
  const ImageTaskSource images(ImageTaskConfig{});
  const auto small = default_model_config("tepttnp", "small", images);
  const auto medium = default_model_config("tepttnp", "medium", images);
  EXPECT_EQ(medium.num_layers, 5);
  EXPECT_EQ(medium.num_heads, 8);
  EXPECT_EQ(medium.head_dim, 16);
  EXPECT_NE(small.num_layers, medium.num_layers);
  EXPECT_EQ(medium.dim_model, small.dim_model);
  EXPECT_EQ(medium.pairwise_width, small.pairwise_width);
  EXPECT_EQ(medium.num_pseudo_tokens, small.num_pseudo_tokens);
  EXPECT_EQ(medium.input_scale, small.input_scale);
  const auto one_d = default_model_config("tetnp", "medium");
  EXPECT_EQ(one_d.num_layers, 5);
  EXPECT_EQ(one_d.pairwise_width, default_model_config("tetnp", "small").pairwise_width);
  EXPECT_EQ(model_options_json(default_model_config("convcnp", "medium")),
            model_options_json(default_model_config("convcnp", "small")));
  try {
    default_model_config("tetnp", "huge");
    FAIL() << "an unknown size was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("medium"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace npe
