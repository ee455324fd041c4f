// Checkpoints: exact round trips, atomic writes, and clear errors for bad files.

#include <filesystem>
#include <fstream>

#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_catalog.h"
#include "npe/models/model_registry.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;
using testing::random_task;
using testing::tiny_config;

class Checkpoints : public testing::TemporaryFolderTest {
 protected:
  fs::path save(const std::string& kind, int64_t dim_x = 1) {
    auto model = make_model(tiny_config(kind, dim_x));
    CheckpointMetadata metadata;
    metadata.model = model->config();
    metadata.steps = 12;
    metadata.validation_ll = -0.5;
    auto path = dir / (kind + ".pt");
    save_checkpoint(path, *model, metadata);
    return path;
  }

  static void overwrite(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
};

TEST_F(Checkpoints, RoundTripReproducesPredictionsExactly) {
  for (const auto& info : model_infos()) {
    const int64_t dim_x = info.on_grid ? 2 : 1;
    torch::manual_seed(21);
    auto model = make_model(tiny_config(info.kind, dim_x));
    model->eval();
    CheckpointMetadata metadata;
    metadata.model = model->config();
    metadata.steps = 3;
    auto path = dir / (info.kind + ".pt");
    save_checkpoint(path, *model, metadata);
    auto loaded = load_checkpoint(path);
    EXPECT_EQ(loaded.metadata.steps, 3);
    EXPECT_EQ(loaded.metadata.model.to_json(), model->config().to_json());
    auto task = random_task(2, 6, 5, dim_x);
    if (dim_x == 2) {
      task.xc = task.xc.mul(4).round();
      task.xt = task.xt.mul(4).round();
    }
    torch::NoGradGuard no_grad;
    auto a = model->predict(task);
    auto b = loaded.model->predict(task);
    EXPECT_TRUE(torch::equal(a.mean, b.mean)) << info.kind;
    EXPECT_TRUE(torch::equal(a.stddev, b.stddev)) << info.kind;
  }
}

TEST_F(Checkpoints, SavingLeavesNoTemporaryFiles) {
  auto path = save("tnp");
  save("tnp");  // overwrite in place
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "tnp.pt");
  }
  EXPECT_EQ(files, 1);
  EXPECT_NO_THROW(load_checkpoint(path));
}

TEST_F(Checkpoints, MissingFileIsAClearError) {
  NPE_EXPECT_THROW_WITH(load_checkpoint(dir / "nope.pt"), CheckpointError, "does not exist");
}

TEST_F(Checkpoints, TruncatedFileIsAClearError) {
  auto path = save("cnp");
  auto bytes = read(path);
  overwrite(path, bytes.substr(0, bytes.size() / 2));
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "corrupt");
}

TEST_F(Checkpoints, GarbageFileIsAClearError) {
  auto path = dir / "garbage.pt";
  overwrite(path, "this is not a checkpoint at all");
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "corrupt or truncated");
}

TEST_F(Checkpoints, CorruptedWeightsAreDetected) {
  auto path = save("tnp");
  auto bytes = read(path);
  // Flip bytes in the middle of the file, where the tensor data live.
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 16; ++i) bytes[i] ^= 0x5a;
  overwrite(path, bytes);
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "corrupt");
}

TEST_F(Checkpoints, MismatchedMetadataIsAClearError) {
  auto model = make_model(tiny_config("tnp"));
  CheckpointMetadata metadata;
  metadata.model = tiny_config("tnp");
  metadata.model.options<TransformerOptions>().dim_model =
      32;  // says one size, holds weights of another
  auto path = dir / "mismatch.pt";
  save_checkpoint(path, *model, metadata);
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "but the model needs");
}

// nlohmann::json casts a float to an integer field unchecked: out-of-range numbers are refused
// before that (fuzz_checkpoint_metadata found 1.3e64 in dim_model).
TEST_F(Checkpoints, OutOfRangeNumbersInMetadataAreRefused) {
  auto json = CheckpointMetadata{}.to_json();
  json["model"] = tiny_config("tnp").to_json();
  json["model"]["dim_model"] = 1.3e64;
  NPE_EXPECT_THROW_WITH(CheckpointMetadata::from_json(json), CheckpointError, "out of range");
  NPE_EXPECT_THROW_WITH(ModelConfig::from_json(json["model"]), ConfigError, "out of range");
  json["model"]["dim_model"] = 64.0;  // a float that is a fine integer still reads
  EXPECT_EQ(CheckpointMetadata::from_json(json).model.options<TransformerOptions>().dim_model, 64);
}

TEST_F(Checkpoints, NumbersTooLargeForTheirFieldAreRefused) {
  // Within int64 but not within the field's type (found by fuzz_checkpoint_metadata).
  auto json = CheckpointMetadata{}.to_json();
  json["model"] = tiny_config("tnp").to_json();
  json["format_version"] = 6676666666.662;
  NPE_EXPECT_THROW_WITH(CheckpointMetadata::from_json(json), CheckpointError,
                        "unsupported checkpoint format version 6676666666");
  json["format_version"] = CheckpointMetadata::kFormatVersion;
  json["seed"] = -5.0;
  NPE_EXPECT_THROW_WITH(CheckpointMetadata::from_json(json), CheckpointError, "'seed'");
  json["seed"] = 7;
  EXPECT_EQ(CheckpointMetadata::from_json(json).seed, 7u);
}

TEST_F(Checkpoints, FutureFormatVersionIsRejected) {
  auto model = make_model(tiny_config("cnp"));
  CheckpointMetadata metadata;
  metadata.model = model->config();
  metadata.format_version = CheckpointMetadata::kFormatVersion + 1;
  auto path = dir / "future.pt";
  save_checkpoint(path, *model, metadata);
  NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "unsupported checkpoint format");
}

// Format 1 predates the corrected transformer NPs: their old weights are refused with a
// reason; kinds whose definition did not change still load.
TEST_F(Checkpoints, FormatVersionOneIsRefusedOnlyForChangedKinds) {
  for (const char* kind : {"tnp", "cnp"}) {
    auto model = make_model(tiny_config(kind));
    CheckpointMetadata metadata;
    metadata.model = model->config();
    metadata.format_version = 1;
    auto path = dir / (std::string(kind) + "-old.pt");
    save_checkpoint(path, *model, metadata);
    if (model_info(kind).definition_version > 1) {
      NPE_EXPECT_THROW_WITH(load_checkpoint(path), CheckpointError, "retrain it");
    } else {
      EXPECT_NO_THROW(load_checkpoint(path));
    }
  }
  EXPECT_GT(model_info("tnp").definition_version, 1);
}

TEST_F(Checkpoints, MetadataCanBeReadAlone) {
  auto path = save("rcnp");
  auto metadata = read_checkpoint_metadata(path);
  EXPECT_EQ(metadata.model.kind, "rcnp");
  EXPECT_DOUBLE_EQ(metadata.validation_ll, -0.5);
}

// Registry order, and within a kind the small size before the paper's, although "tetnp-paper.pt"
// sorts before "tetnp.pt" by name: the list reads "TE-TNP", "TE-TNP · paper size".
TEST_F(Checkpoints, ShippedModelsAreFoundInRegistryOrderAndBadFilesReported) {
  fs::create_directories(dir / "gp1d");
  for (const std::string file : {"tetnp-paper", "tetnp", "cnp", "tnp"}) {
    const std::string kind = file.substr(0, file.find('-'));
    auto model = make_model(tiny_config(kind));
    CheckpointMetadata metadata;
    metadata.model = model->config();
    metadata.size = file == "tetnp-paper" ? "paper" : "small";
    save_checkpoint(dir / "gp1d" / (file + ".pt"), *model, metadata);
  }
  overwrite(dir / "gp1d" / "broken.pt", "not a checkpoint");
  ::setenv("NPE_MODELS_DIR", dir.c_str(), 1);
  std::vector<std::string> problems;
  auto found = find_shipped_models("gp1d", &problems);
  ::unsetenv("NPE_MODELS_DIR");
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].metadata.model.kind, "cnp");
  EXPECT_EQ(found[1].metadata.model.kind, "tnp");
  EXPECT_EQ(found[2].path.filename(), "tetnp.pt");
  EXPECT_EQ(found[3].path.filename(), "tetnp-paper.pt");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("broken.pt"), std::string::npos);
  EXPECT_TRUE(find_models_in(dir / "nothing-here").empty());
}

// A disk that fills up while a checkpoint is written: libtorch's archive writer used to throw
// from its destructor there, which ended the program ("unexpected pos", status 134). Now it is a
// CheckpointError with the reason; the previous checkpoint loads as it was; no temporary stays.
TEST_F(Checkpoints, AFullDiskDuringASaveIsAnErrorAndThePreviousCheckpointLoads) {
  const auto path = save("tetnp");
  const auto size = fs::file_size(path);
  auto bigger = make_model(tiny_config("tetnp"));
  CheckpointMetadata metadata;
  metadata.model = bigger->config();
  metadata.steps = 99;
  {
    testing::FileSizeLimit limit(size / 2);
    NPE_EXPECT_THROW_WITH(save_checkpoint(path, *bigger, metadata), CheckpointError,
                          "cannot write checkpoint '" + path.string() + "': File too large");
  }
  EXPECT_EQ(fs::file_size(path), size);
  EXPECT_EQ(load_checkpoint(path).metadata.steps, 12);
  size_t files = 0;
  for ([[maybe_unused]] const auto& item : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);
}

}  // namespace
}  // namespace npe
