// Importing models of the authors' PyTorch code: checkpoints made by the reference classes
// themselves (tests/reference/make_reference_checkpoints.py, run with Debian's python3-torch),
// converted by npe-convert-reference, must predict exactly what the reference predicted.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "npe/models/reference_export.h"
#include "npe/models/reference_import.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;
using npe::testing::max_abs_diff;

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

std::string file_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs the reference code once per build folder and version of the scripts; empty reason when
/// it worked. ctest runs every test in its own process and the reference code takes about 10 s,
/// so the files are kept under the build folder (NPE_REFERENCE_CACHE), in a folder named by the
/// scripts' contents; it is made under a temporary name and renamed when whole, so a process
/// that fails or races another never leaves half a folder behind.
struct ReferenceFiles {
  fs::path folder;
  std::string unavailable;

  /// The authors' code: $NPE_REFERENCE_DIR (CI runs the suites in a clone with nothing beside
  /// it and names where that code is, .ci/run), else ../shared/reference beside the sources.
  static fs::path directory() {
    const char* env = std::getenv("NPE_REFERENCE_DIR");
    return env && *env ? fs::path(env) : fs::path(NPE_REFERENCE_DIR);
  }

  static const ReferenceFiles& get() {
    static const ReferenceFiles files = make();
    return files;
  }

 private:
  static ReferenceFiles make() {
    ReferenceFiles f;
    const fs::path reference = directory();
    if (!fs::exists(reference / "tetnp")) {
      f.unavailable = "the reference code is not at " + reference.string();
      return f;
    }
    const std::string python = NPE_PYTHON3;
    const auto scripts = python + "\n" + file_text(NPE_MAKE_REFERENCE) + file_text(NPE_CONVERTER);
    std::ostringstream name;
    name << std::hex << std::hash<std::string>{}(scripts);
    f.folder = fs::path(NPE_REFERENCE_CACHE) / name.str();
    if (fs::exists(f.folder)) return f;
    if (std::system((python + " -c 'import torch' 2>/dev/null").c_str()) != 0) {
      f.unavailable = python + " cannot import torch (apt install python3-torch)";
      return f;
    }
    const auto making = fs::path(f.folder.string() + ".making-" + std::to_string(::getpid()));
    fs::create_directories(making);
    const auto make = python + " " + quoted(NPE_MAKE_REFERENCE) + " " + quoted(reference) + " " +
                      quoted(making) + " > /dev/null";
    if (std::system(make.c_str()) != 0) {
      f.unavailable = "make_reference_checkpoints.py failed";
      return f;
    }
    for (const char* file : {"tnp.ckpt", "tetnp.ckpt", "tnp.state_dict.pt"}) {
      const auto convert = python + " " + quoted(NPE_CONVERTER) + " " + quoted(making / file) +
                           " " + quoted(making / (std::string(file) + ".converted")) +
                           " > /dev/null";
      if (std::system(convert.c_str()) != 0) {
        f.unavailable = std::string("npe-convert-reference failed on ") + file;
        return f;
      }
    }
    std::error_code ec;
    fs::rename(making, f.folder, ec);
    if (ec) fs::remove_all(making, ec);  // another process finished first: its files are the same
    return f;
  }
};

class ReferenceImport : public npe::testing::TemporaryFolderTest {
 protected:
  void SetUp() override {
    TemporaryFolderTest::SetUp();
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
  const auto path = dir / "imported.pt";
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

// npe export-reference: the inverse. Import, export: the same tensors under the same names; and
// the authors' class, loading the export strictly into fresh weights, predicts what npe does.
TEST_F(ReferenceImport, ExportGivesBackTheReferenceWeightsAndTheAuthorsModelLoadsThem) {
  for (const std::string kind : {"tnp", "tetnp"}) {
    SCOPED_TRACE(kind);
    const auto e = expected(kind);
    const auto original = read_reference_state_dict(folder / (kind + ".ckpt.converted"));
    auto imported = import(kind + ".ckpt.converted", e.num_heads);
    const auto exported = export_reference_model(*imported.model);
    ASSERT_EQ(exported.tensors.size(), original.tensors.size());
    for (const auto& [name, tensor] : original.tensors) {
      const auto found = exported.tensors.find(name);
      ASSERT_NE(found, exported.tensors.end()) << name;
      EXPECT_LT(max_abs_diff(found->second, tensor), 1e-6) << name;
    }
    const auto file = dir / (kind + ".exported.pt");
    write_reference_export(exported, file);
    const auto result = dir / (kind + ".exported.prediction.json");
    const auto check = std::string(NPE_PYTHON3) + " " + quoted(NPE_MAKE_REFERENCE) + " " +
                       quoted(ReferenceFiles::directory()) + " --check-export " + quoted(file) +
                       " " + kind + " " + quoted(result);
    ASSERT_EQ(std::system(check.c_str()), 0) << check;
    std::ifstream in(result);
    const auto j = nlohmann::json::parse(in);
    torch::NoGradGuard no_grad;
    const auto npe = imported.model->predict(e.task);
    const auto rows = [&](const char* key) {
      const auto v = j.at(key).get<std::vector<std::vector<std::vector<double>>>>();
      std::vector<double> flat;
      for (const auto& a : v)
        for (const auto& b : a) flat.insert(flat.end(), b.begin(), b.end());
      return torch::tensor(flat, torch::kFloat32).view(npe.mean.sizes());
    };
    EXPECT_LT(max_abs_diff(rows("mean"), npe.mean), 1e-5);
    EXPECT_LT(max_abs_diff(rows("stddev"), npe.stddev), 1e-5);
    std::ifstream architecture(file.string() + ".json");
    EXPECT_EQ(nlohmann::json::parse(architecture).at("num_heads"), e.num_heads);
  }
}

// A model trained here normalises queries and keys separately: the authors' layers cannot hold
// it exactly, and the refusal names the layer. Other kinds have no counterpart.
TEST(ReferenceExport, ModelsWithoutAnExactCounterpartAreRefusedWithTheReason) {
  torch::manual_seed(0);
  auto config = default_model_config("tetnp", "small");
  config.options<TransformerOptions>().num_layers = 1;
  auto model = make_model(config);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->named_parameters(true))
      if (p.key().find("norm_k") != std::string::npos) p.value().add_(0.25);
  }
  NPE_EXPECT_THROW_WITH(export_reference_model(*model), CheckpointError,
                        "normalises queries and keys with different weights");
  auto cnp = make_model(default_model_config("cnp", "small"));
  NPE_EXPECT_THROW_WITH(export_reference_model(*cnp), CheckpointError, "no counterpart");
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
