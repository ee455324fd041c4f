// TorchScript models scripted by PyTorch itself (tests/torchscript/make_torchscript_models.py,
// made at build time with Debian's python3-torch): predicted through the Predictor interface
// as PyTorch predicts them, described from npe.json or by what was assumed, and every way of
// breaking the contract is a message that names the file and what was expected.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <torch/script.h>

#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/predictors/torchscript_predictor.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;

class TorchScriptModels : public ::testing::Test {
 protected:
  void SetUp() override {
    folder = NPE_TORCHSCRIPT_MODELS_DIR;
    if (!fs::exists(folder / "te_np.pt"))
      GTEST_SKIP() << "no TorchScript test models (python3 cannot import torch)";
  }
  fs::path model(const std::string& name) const { return folder / name; }

  // The scripts' one 1-D task, as a batch of one.
  TaskBatch script_task() const {
    const auto context = read_point_table(folder / "context.csv");
    const auto targets = read_point_table(folder / "targets.csv", 1);
    TaskBatch batch;
    batch.task = {column(context, "x"), column(context, "y"), column(targets, "x"), {}};
    return batch;
  }
  torch::Tensor expected(const std::string& name, const std::string& what) const {
    return column(read_point_table(folder / (name + ".expected.csv")), what);
  }
  // A table's column as [1, N, 1].
  static torch::Tensor column(const PointTable& table, const std::string& name) {
    const int index = table.column_index(name);
    if (index < 0) throw std::runtime_error("no column " + name);
    std::vector<float> values;
    for (const auto& row : table.rows) values.push_back(float(row[size_t(index)]));
    return torch::tensor(values).view({1, -1, 1});
  }

  // The message of what `f` throws as E, or a failure.
  template <typename E, typename F>
  std::string message_of(F&& f) const {
    try {
      f();
    } catch (const E& e) {
      return e.what();
    }
    ADD_FAILURE() << "nothing thrown";
    return {};
  }

  fs::path folder;
};

TEST_F(TorchScriptModels, PredictWhatPyTorchPredicts) {
  for (const std::string name : {"te_np.pt", "absolute_np.pt", "joint_np.pt"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(is_torchscript_model(model(name)));
    auto predictor = load_predictor(model(name));
    EXPECT_EQ(predictor->info().name, kTorchScriptKind);
    const auto p = predictor->predict(script_task());
    EXPECT_LT(testing::max_abs_diff(p.mean, expected(name, "mean")), 1e-5);
    EXPECT_LT(testing::max_abs_diff(p.stddev, expected(name, "std")), 1e-5);
  }
}

TEST_F(TorchScriptModels, NpeJsonNamesTheModelAndItsTask) {
  const auto info = read_torchscript_model(model("te_np.pt"));
  EXPECT_EQ(info.display_name, "Test TE-NP");
  EXPECT_TRUE(info.translation_equivariant);
  EXPECT_TRUE(info.assumptions.empty());
  const auto meta = read_model_metadata(model("te_np.pt"));
  EXPECT_EQ(meta.model.kind, kTorchScriptKind);
  EXPECT_EQ(meta.task_name(), "gp1d");
  EXPECT_EQ(meta.model.dim_x, 1);

  const auto image = read_model_metadata(model("image_np.pt"));
  EXPECT_EQ(image.model.dim_x, 2);
  EXPECT_EQ(image.model.dim_y, 1);
  EXPECT_EQ(image.task.value("kind", ""), "image");
  EXPECT_DOUBLE_EQ(image.model.input_scale, 0.1);
}

TEST_F(TorchScriptModels, WithoutNpeJsonTheNameTaskAndDimensionsAreAssumedAndSaid) {
  const auto info = read_torchscript_model(model("absolute_np.pt"));
  EXPECT_EQ(info.display_name, "absolute_np");
  EXPECT_EQ(info.dim_x, 1);
  EXPECT_EQ(info.dim_y, 1);
  EXPECT_EQ(info.task.value("kind", ""), "gp1d");
  ASSERT_EQ(info.assumptions.size(), 3u);
  EXPECT_NE(info.assumptions[1].find("trial call"), std::string::npos);
  const auto predictor = load_predictor(model("absolute_np.pt"));
  EXPECT_NE(predictor->info().description.find("Assumed:"), std::string::npos);
  EXPECT_FALSE(predictor->info().capabilities.translation_equivariant);
}

TEST_F(TorchScriptModels, InputScaleMultipliesTheInputsBeforeForward) {
  auto predictor = load_predictor(model("image_np.pt"));
  torch::manual_seed(0);
  TaskBatch batch;
  batch.task = {
      torch::randn({2, 7, 2}) * 10, torch::randn({2, 7, 1}), torch::randn({2, 5, 2}) * 10, {}};
  const auto scaled = predictor->predict(batch);
  auto module = torch::jit::load(model("image_np.pt").string());
  const auto out = module.forward({batch.task.xc * 0.1, batch.task.yc, batch.task.xt * 0.1})
                       .toTuple()
                       ->elements();
  EXPECT_LT(testing::max_abs_diff(scaled.mean, out[0].toTensor()), 1e-5);
}

TEST_F(TorchScriptModels, TranslationEquivariantByConstructionIsUnchangedByAShift) {
  auto predictor = load_predictor(model("te_np.pt"));
  auto absolute = load_predictor(model("absolute_np.pt"));
  const auto batch = script_task();
  auto shifted = batch;
  shifted.task = {batch.task.xc + 3.7, batch.task.yc, batch.task.xt + 3.7, {}};
  EXPECT_LT(testing::max_abs_diff(predictor->predict(batch).mean, predictor->predict(shifted).mean),
            1e-5);
  EXPECT_GT(testing::max_abs_diff(absolute->predict(batch).mean, absolute->predict(shifted).mean),
            1e-3);
}

TEST_F(TorchScriptModels, ACovarianceOutputGivesSamplesAndTheJointLikelihood) {
  auto predictor = load_predictor(model("joint_np.pt"));
  EXPECT_TRUE(predictor->info().capabilities.joint);
  auto batch = script_task();
  const auto n = batch.task.xt.size(1);
  EXPECT_EQ(predictor->sample(batch, 3, 7).sizes(), torch::IntArrayRef({3, 1, n, 1}));
  const auto covariance = predictor->predictive_covariance(batch);
  EXPECT_EQ(covariance.sizes(), torch::IntArrayRef({1, n, n}));
  batch.task.yt = torch::sin(batch.task.xt);
  const auto joint = predictor->joint_log_likelihood(batch);
  // The GP's targets are strongly correlated: the joint likelihood is not the marginals' sum.
  auto marginal_only = load_predictor(model("absolute_np.pt"));
  const auto p = predictor->predict(batch);
  const auto marginal = log_likelihood_per_task(p, batch.task.yt).to(torch::kFloat64);
  EXPECT_TRUE(torch::isfinite(joint).all().item<bool>());
  EXPECT_GT(std::abs((joint - marginal).item<double>()), 0.1);
  EXPECT_THROW(marginal_only->sample(batch, 2, 1), ConfigError);
}

TEST_F(TorchScriptModels, EachBrokenContractIsAMessageNamingTheFile) {
  struct Case {
    const char* file;
    const char* expected;
  };
  const Case load_cases[] = {
      {"wrong_signature.pt", "its forward(x: Tensor) is not a neural process's: expected forward("},
      {"bad_metadata.pt", "npe.json has an unknown field 'dim_z'"},
      {"newer_pytorch.pt", "written by a PyTorch newer than the libtorch"},
  };
  for (const auto& c : load_cases) {
    SCOPED_TRACE(c.file);
    const auto message = message_of<CheckpointError>([&] { load_predictor(model(c.file)); });
    EXPECT_NE(message.find(model(c.file).string()), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
  const Case predict_cases[] = {
      {"wrong_shape.pt", "returned a mean of shape [1, 41, 2] for 41 targets: expected"},
      {"nan_std.pt", "returned a std with NaN or infinite values"},
      {"negative_std.pt", "returned a std that is not positive everywhere"},
      {"throws.pt", "failed in forward(): builtins.RuntimeError: this model refuses every context"},
  };
  for (const auto& c : predict_cases) {
    SCOPED_TRACE(c.file);
    auto predictor = load_predictor(model(c.file));
    const auto message = message_of<ModelError>([&] { predictor->predict(script_task()); });
    EXPECT_NE(message.find(model(c.file).string()), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

TEST_F(TorchScriptModels, WrongInputDimensionsAreRefusedBeforeForwardRuns) {
  auto predictor = load_predictor(model("te_np.pt"));
  TaskBatch batch;
  batch.task = {torch::zeros({1, 3, 2}), torch::zeros({1, 3, 1}), torch::zeros({1, 4, 2}), {}};
  const auto message = message_of<InvalidInputError>([&] { predictor->predict(batch); });
  EXPECT_NE(message.find("takes D_x = 1, D_y = 1, not D_x = 2"), std::string::npos) << message;
}

TEST_F(TorchScriptModels, FilesThatAreNotProgramsAreNotTakenForOne) {
  for (const char* name : {"truncated.pt", "not_torchscript.pt"}) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(is_torchscript_model(model(name)));
    EXPECT_THROW(load_predictor(model(name)), CheckpointError);
  }
  EXPECT_FALSE(is_torchscript_model(model("no-such-file.pt")));
  const fs::path shipped = fs::path(NPE_SHIPPED_MODELS_DIR) / "gp1d" / "tetnp.pt";
  EXPECT_FALSE(is_torchscript_model(shipped));
}

TEST_F(TorchScriptModels, TheCheckpointLoaderSaysWhatAProgramIsAndNeverRunsIt) {
  const auto message =
      message_of<CheckpointError>([&] { load_checkpoint(model("absolute_np.pt")); });
  EXPECT_NE(message.find("is a TorchScript model, not an NP Explorer checkpoint"),
            std::string::npos)
      << message;
  EXPECT_THROW(read_checkpoint_metadata(model("te_np.pt")), CheckpointError);
}

}  // namespace
}  // namespace npe
