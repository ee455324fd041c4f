// Importing models of the authors' PyTorch code: checkpoints made by the reference classes
// themselves (tests/reference/make_reference_checkpoints.py, run with Debian's python3-torch),
// converted by npe-convert-reference, must predict exactly what the reference predicted.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "npe/models/checkpoint.h"
#include "npe/models/reference_import.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;
using npe::testing::max_abs_diff;

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

/// Runs the reference code once for the whole suite; empty reason when it worked.
struct ReferenceFiles {
  fs::path folder;
  std::string unavailable;

  static const ReferenceFiles& get() {
    static const ReferenceFiles files = make();
    static const struct RemovedAtExit {
      fs::path folder;
      ~RemovedAtExit() {
        std::error_code ec;
        if (!folder.empty()) fs::remove_all(folder, ec);
      }
    } removed{files.folder};
    return files;
  }

 private:
  static ReferenceFiles make() {
    ReferenceFiles f;
    const fs::path reference = NPE_REFERENCE_DIR;
    if (!fs::exists(reference / "tetnp")) {
      f.unavailable = "the reference code is not at " + reference.string();
      return f;
    }
    const std::string python = NPE_PYTHON3;
    if (std::system((python + " -c 'import torch' 2>/dev/null").c_str()) != 0) {
      f.unavailable = python + " cannot import torch (apt install python3-torch)";
      return f;
    }
    f.folder = fs::temp_directory_path() / ("npe_reference_" + std::to_string(::getpid()));
    fs::create_directories(f.folder);
    const auto make = python + " " + quoted(NPE_MAKE_REFERENCE) + " " + quoted(reference) + " " +
                      quoted(f.folder) + " > /dev/null";
    if (std::system(make.c_str()) != 0) {
      f.unavailable = "make_reference_checkpoints.py failed";
      return f;
    }
    for (const char* name : {"tnp.ckpt", "tetnp.ckpt", "tnp.state_dict.pt"}) {
      const auto convert = python + " " + quoted(NPE_CONVERTER) + " " + quoted(f.folder / name) +
                           " " + quoted(f.folder / (std::string(name) + ".converted")) +
                           " > /dev/null";
      if (std::system(convert.c_str()) != 0) {
        f.unavailable = std::string("npe-convert-reference failed on ") + name;
        return f;
      }
    }
    return f;
  }
};

class ReferenceImport : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& files = ReferenceFiles::get();
    if (!files.unavailable.empty()) GTEST_SKIP() << files.unavailable;
    folder = files.folder;
  }

  /// The reference model's task and prediction.
  struct Expected {
    Task task;
    torch::Tensor mean, stddev;
    int64_t num_heads = 0;
  };
  Expected expected(const std::string& name) const {
    std::ifstream in(folder / (name + ".prediction.json"));
    const auto j = nlohmann::json::parse(in);
    auto tensor = [&](const char* key) {
      const auto rows = j.at(key).get<std::vector<std::vector<std::vector<double>>>>();
      std::vector<double> flat;
      for (const auto& a : rows)
        for (const auto& b : a) flat.insert(flat.end(), b.begin(), b.end());
      return torch::tensor(flat, torch::kFloat32)
          .view({int64_t(rows.size()), int64_t(rows[0].size()), int64_t(rows[0][0].size())});
    };
    Expected e;
    e.task = {tensor("xc"), tensor("yc"), tensor("xt"), {}};
    e.mean = tensor("mean");
    e.stddev = tensor("stddev");
    e.num_heads = j.at("num_heads").get<int64_t>();
    return e;
  }

  LoadedCheckpoint import(const std::string& file, int64_t heads) const {
    ReferenceImportOptions options;
    options.num_heads = heads;
    return import_reference_model(read_reference_state_dict(folder / file), options);
  }

  fs::path folder;
};

TEST_F(ReferenceImport, TnpPredictsWhatTheReferenceCodePredicts) {
  const auto e = expected("tnp");
  auto loaded = import("tnp.ckpt.converted", e.num_heads);
  EXPECT_EQ(loaded.metadata.model.kind, "tnp");
  EXPECT_EQ(loaded.metadata.model.options<TransformerOptions>().num_layers, 2);
  EXPECT_EQ(loaded.metadata.model.options<TransformerOptions>().dim_model, 32);
  torch::NoGradGuard no_grad;
  auto p = loaded.model->predict(e.task);
  EXPECT_LT(max_abs_diff(p.mean, e.mean), 1e-5);
  EXPECT_LT(max_abs_diff(p.stddev, e.stddev), 1e-5);
}

TEST_F(ReferenceImport, TeTnpPredictsWhatTheReferenceCodePredicts) {
  const auto e = expected("tetnp");
  auto loaded = import("tetnp.ckpt.converted", /*heads: read from the kernel*/ 1);
  const auto& c = loaded.metadata.model;
  EXPECT_EQ(c.kind, "tetnp");
  EXPECT_EQ(c.options<TransformerOptions>().num_heads, e.num_heads);
  EXPECT_TRUE(c.options<LayerSharingOptions>()
                  .share_layer_weights);  // the reference config gives no separate mhsa_layer
  EXPECT_FALSE(c.options<TeAttentionOptions>().update_locations);
  torch::NoGradGuard no_grad;
  auto p = loaded.model->predict(e.task);
  EXPECT_LT(max_abs_diff(p.mean, e.mean), 1e-5);
  EXPECT_LT(max_abs_diff(p.stddev, e.stddev), 1e-5);
  // And the imported model keeps the reference model's translation equivariance.
  auto shifted = loaded.model->predict(e.task.translated(Translation{{7.5}}));
  EXPECT_LT(max_abs_diff(shifted.mean, p.mean), 1e-4);
}

TEST_F(ReferenceImport, BareStateDictImportsLikeTheLightningCheckpoint) {
  const auto e = expected("tnp");
  auto from_ckpt = import("tnp.ckpt.converted", e.num_heads);
  auto from_state_dict = import("tnp.state_dict.pt.converted", e.num_heads);
  torch::NoGradGuard no_grad;
  EXPECT_EQ(max_abs_diff(from_ckpt.model->predict(e.task).mean,
                         from_state_dict.model->predict(e.task).mean),
            0.0);
}

TEST_F(ReferenceImport, ImportedModelSurvivesASaveAndLoad) {
  const auto e = expected("tetnp");
  auto loaded = import("tetnp.ckpt.converted", 1);
  const auto path = folder / "imported.pt";
  save_checkpoint(path, *loaded.model, loaded.metadata);
  auto reloaded = load_checkpoint(path);
  EXPECT_EQ(reloaded.metadata.size, "reference");
  torch::NoGradGuard no_grad;
  EXPECT_LT(max_abs_diff(reloaded.model->predict(e.task).mean, e.mean), 1e-5);
}

TEST_F(ReferenceImport, UnconvertedPickleGetsAnErrorThatSaysHowToConvert) {
  NPE_EXPECT_THROW_WITH(read_reference_state_dict(folder / "tnp.ckpt"), CheckpointError,
                        "npe-convert-reference");
}

TEST_F(ReferenceImport, HeadsThatDoNotDivideTheWidthAreRefused) {
  NPE_EXPECT_THROW_WITH(import("tnp.ckpt.converted", 5), CheckpointError, "heads");
}

TEST_F(ReferenceImport, MissingAndLeftOverWeightsAreRefused) {
  auto state = read_reference_state_dict(folder / "tnp.ckpt.converted");
  auto missing = state;
  missing.tensors.erase("encoder.transformer_encoder.mhca_layers.1.norm2.bias");
  NPE_EXPECT_THROW_WITH(import_reference_model(missing, {4}), CheckpointError,
                        "mhca_layers.1.norm2.bias");
  auto extra = state;
  extra.tensors["encoder.transformer_encoder.mhca_layers.0.attn.extra.weight"] = torch::ones({2});
  NPE_EXPECT_THROW_WITH(import_reference_model(extra, {4}), CheckpointError, "no place");
  auto wrong_shape = state;
  wrong_shape.tensors["decoder.z_decoder.net.2.bias"] = torch::ones({3});
  NPE_EXPECT_THROW_WITH(import_reference_model(wrong_shape, {4}), CheckpointError, "shape");
  auto not_finite = state;
  not_finite.tensors["decoder.z_decoder.net.2.bias"] =
      torch::full({32}, std::numeric_limits<float>::quiet_NaN());
  NPE_EXPECT_THROW_WITH(import_reference_model(not_finite, {4}), CheckpointError, "finite");
}

}  // namespace

// Needs no reference code: files that are not converted checkpoints at all.
TEST(ReferenceImportFiles, MissingGarbageAndForeignFilesGetClearErrors) {
  const auto folder = std::filesystem::temp_directory_path();
  NPE_EXPECT_THROW_WITH(read_reference_state_dict(folder / "npe_no_such_file.pt"), CheckpointError,
                        "does not exist");
  const auto garbage = folder / ("npe_garbage_" + std::to_string(::getpid()) + ".pt");
  std::ofstream(garbage) << "PK\x03\x04 this is not an archive";
  EXPECT_THROW(read_reference_state_dict(garbage), CheckpointError);
  std::filesystem::remove(garbage);
  NPE_EXPECT_THROW_WITH(import_reference_model(ReferenceStateDict{}), CheckpointError,
                        "architecture");
}

}  // namespace npe
