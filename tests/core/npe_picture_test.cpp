// The user's own pictures (issue 104): folders of PNG and JPEG files, IDX files and CIFAR-10's
// binary batches read as one array of one size, grey or colour; the pictures task drawn from
// them, split by picture, stored decided in its configuration. Tests write their own files.

#include <jpeglib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "npe/data/dataset_cache.h"
#include "npe/data/jpeg_image.h"
#include "npe/data/picture_collection.h"
#include "npe/data/picture_tasks.h"
#include "npe/data/png_image.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/training/training_job.h"
#include "test_support.h"

namespace npe {
namespace {
namespace fs = std::filesystem;

// A JPEG of [H, W, 3] values in [0, 1], at the highest quality.
void write_jpeg(const fs::path& path, const torch::Tensor& rgb) {
  const auto bytes = rgb.mul(255).round().clamp(0, 255).to(torch::kUInt8).contiguous();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  jpeg_compress_struct info{};
  jpeg_error_mgr errors{};
  info.err = jpeg_std_error(&errors);
  jpeg_create_compress(&info);
  jpeg_stdio_dest(&info, file);
  info.image_width = static_cast<JDIMENSION>(rgb.size(1));
  info.image_height = static_cast<JDIMENSION>(rgb.size(0));
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, 100, TRUE);
  jpeg_start_compress(&info, TRUE);
  const int64_t row_bytes = rgb.size(1) * 3;
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = bytes.data_ptr<uint8_t>() + info.next_scanline * row_bytes;
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  std::fclose(file);
}

// A smooth colour picture, different for each k: red rises down, green across, blue with k.
torch::Tensor colour_picture(int64_t h, int64_t w, int k) {
  auto r = torch::linspace(0.1, 0.9, h).unsqueeze(1).expand({h, w});
  auto g = torch::linspace(0.2, 0.8, w).unsqueeze(0).expand({h, w});
  auto b = torch::full({h, w}, 0.1 + 0.08 * k);
  return torch::stack({r, g, b}, -1).to(torch::kFloat32).contiguous();
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class Pictures : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("npe-picture-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir / "photos" / "cats");
    fs::create_directories(dir / "photos" / "dogs");
    fs::create_directories(dir / "photos" / ".thumbnails");
    // Six 16 x 16 PNGs, four 24 x 20 JPEGs (one of them as .JPG), a broken file, a hidden one.
    for (int k = 0; k < 6; ++k) {
      write_png(dir / "photos" / "cats" / ("cat" + std::to_string(k) + ".png"),
                colour_picture(16, 16, k));
    }
    for (int k = 0; k < 4; ++k) {
      write_jpeg(dir / "photos" / "dogs" / ("dog" + std::to_string(k) + (k == 3 ? ".JPG" : ".jpg")),
                 colour_picture(24, 20, k));
    }
    write_bytes(dir / "photos" / "dogs" / "broken.png", "\x89PNG\r\n\x1a\nnot really");
    write_png(dir / "photos" / ".thumbnails" / "hidden.png", colour_picture(16, 16, 0));
    write_bytes(dir / "photos" / "notes.txt", "not a picture");
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

TEST_F(Pictures, JpegIsReadAsItWasWritten) {
  const auto picture = colour_picture(24, 20, 2);
  const auto path = dir / "photos" / "dogs" / "dog2.jpg";
  const auto read = read_jpeg_bytes(path, 3).to(torch::kFloat32) / 255;
  ASSERT_EQ(read.sizes(), picture.sizes());
  // Quality 100 with 4:2:0 chroma: within a few levels of 255 on these smooth ramps.
  EXPECT_LT((read - picture).abs().mean().item<double>(), 0.02);
  const auto grey = read_jpeg_bytes(path, 1);
  EXPECT_EQ(grey.sizes(), (torch::IntArrayRef{24, 20, 1}));
  // Truncated: refused, not filled with grey.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  // Cut inside the compressed data: libjpeg would decode it with the rest grey.
  write_bytes(dir / "cut.jpg", bytes.substr(0, bytes.size() - 40));
  NPE_EXPECT_THROW_WITH(read_jpeg_bytes(dir / "cut.jpg", 3), DataError, "truncated or corrupt");
  // Cut inside the header.
  write_bytes(dir / "header.jpg", bytes.substr(0, 200));
  NPE_EXPECT_THROW_WITH(read_jpeg_bytes(dir / "header.jpg", 3), DataError, "not a readable JPEG");
  write_bytes(dir / "fake.jpg", "\xFF\xD8\xFF\xE0 nothing more");
  NPE_EXPECT_THROW_WITH(read_jpeg_bytes(dir / "fake.jpg", 3), DataError, "fake.jpg");
}

TEST_F(Pictures, AFolderIsReadWholeAtOneSize) {
  const auto collection = read_picture_collection(dir / "photos", 0, PictureColour::Auto);
  EXPECT_EQ(collection.format, "PNG/JPEG folder");
  // Ten pictures: the hidden folder, the text file and the broken PNG are not among them.
  EXPECT_EQ(collection.count(), 10);
  EXPECT_EQ(collection.unreadable, 1);
  EXPECT_NE(collection.first_unreadable.find("broken.png"), std::string::npos);
  EXPECT_EQ(collection.channels(), 3);
  // Two sizes: brought to 32 with a note saying so; the names are relative, sorted.
  EXPECT_EQ(collection.size(), 32);
  EXPECT_EQ(collection.resized, 10);
  EXPECT_EQ(collection.names.front(), "cats/cat0.png");
  EXPECT_EQ(collection.names.back(), "dogs/dog3.JPG");
  EXPECT_NE(collection.describe().find("size=N"), std::string::npos) << collection.describe();
  EXPECT_NE(collection.describe().find("1 files could not be read"), std::string::npos);

  // size=16: the PNGs keep their pixels exactly; the 24 x 20 JPEGs are shrunk to 19 x 16 by
  // averaging and their centre kept, so the green ramp (across) survives.
  const auto sixteen = read_picture_collection(dir / "photos", 16, PictureColour::Auto);
  EXPECT_EQ(sixteen.size(), 16);
  EXPECT_EQ(sixteen.resized, 4);
  const auto cat0 = sixteen.pictures[0].to(torch::kFloat32) / 255;
  EXPECT_LT((cat0 - colour_picture(16, 16, 0)).abs().max().item<double>(), 0.6 / 255);
  const auto dog = sixteen.pictures[6].to(torch::kFloat32) / 255;
  EXPECT_LT(dog.select(2, 1)[8][0].item<double>(), dog.select(2, 1)[8][15].item<double>());
  // Grey on request: one channel, luminance.
  const auto grey = read_picture_collection(dir / "photos", 16, PictureColour::Grey);
  EXPECT_EQ(grey.channels(), 1);
}

TEST_F(Pictures, GreyPicturesReadAutomaticallyAreOneChannel) {
  fs::create_directories(dir / "grey");
  for (int k = 0; k < 3; ++k) {
    write_png(dir / "grey" / (std::to_string(k) + ".png"),
              colour_picture(8, 8, k).select(2, 0).unsqueeze(2));
  }
  const auto collection = read_picture_collection(dir / "grey", 0, PictureColour::Auto);
  EXPECT_EQ(collection.channels(), 1);
  EXPECT_EQ(collection.size(), 8);
  EXPECT_EQ(collection.resized, 0);
  EXPECT_EQ(read_picture_collection(dir / "grey", 0, PictureColour::Rgb).channels(), 3);
}

TEST_F(Pictures, CifarBatchesAndIdxFilesAreRead) {
  // CIFAR-10's binary layout: a label byte, then the red, green and blue planes.
  fs::create_directories(dir / "cifar");
  // Each byte tells its record, plane, row and column apart (rows and columns unequal).
  const auto byte = [](int base, int i, int plane, int row, int col) {
    return static_cast<uint8_t>(base + i + 50 * plane + 3 * row + col / 4);
  };
  auto write_batch = [&](const fs::path& path, int records, int base) {
    std::string bytes;
    for (int i = 0; i < records; ++i) {
      bytes.push_back(static_cast<char>(i % 10));
      for (int plane = 0; plane < 3; ++plane)
        for (int row = 0; row < 32; ++row)
          for (int col = 0; col < 32; ++col)
            bytes.push_back(static_cast<char>(byte(base, i, plane, row, col)));
    }
    write_bytes(path, bytes);
  };
  write_batch(dir / "cifar" / "data_batch_1.bin", 40, 100);
  write_batch(dir / "cifar" / "test_batch.bin", 8, 0);
  const auto cifar = read_picture_collection(dir / "cifar", 0, PictureColour::Auto);
  EXPECT_EQ(cifar.format, "CIFAR-10 binary");
  ASSERT_EQ(cifar.count(), 48);
  EXPECT_EQ(cifar.size(), 32);
  EXPECT_EQ(cifar.channels(), 3);
  // [picture, row, column, channel]: red, green and blue of record 2 at row 5, column 17.
  for (int plane = 0; plane < 3; ++plane) {
    EXPECT_EQ(cifar.pictures[2][5][17][plane].item<int>(), byte(100, 2, plane, 5, 17));
  }
  EXPECT_EQ(cifar.pictures[41][30][1][1].item<int>(), byte(0, 1, 1, 30, 1));  // test_batch #1
  EXPECT_TRUE(cifar.has_own_test_split());
  EXPECT_EQ(cifar.names[40], "test_batch.bin#0");
  // The test split is test_batch.bin's, whatever the fractions.
  PictureTaskConfig config;
  config.data = dir / "cifar";
  PictureTaskSource source(config);
  EXPECT_EQ(source.pictures(Split::Test).size(0), 8);
  EXPECT_EQ(source.pictures(Split::Train).size(0) + source.pictures(Split::Validation).size(0), 40);
  EXPECT_EQ(source.config().canvas, 64);  // the paper's T-CIFAR10 protocol
  EXPECT_EQ(source.config().train_max_translation, 16);
  EXPECT_EQ(source.dim_y(), 3);

  // IDX: [N, H, W] grey, gzip or not.
  std::string idx = {0, 0, 0x08, 3, 0, 0, 0, 12, 0, 0, 0, 6, 0, 0, 0, 6};
  for (int i = 0; i < 12 * 36; ++i) idx.push_back(static_cast<char>(i % 251));
  write_bytes(dir / "digits-idx3-ubyte", idx);
  const auto digits = read_picture_collection(dir / "digits-idx3-ubyte", 0, PictureColour::Auto);
  EXPECT_EQ(digits.format, "IDX");
  EXPECT_EQ(digits.count(), 12);
  EXPECT_EQ(digits.size(), 6);
  EXPECT_EQ(digits.channels(), 1);
  EXPECT_EQ(digits.pictures[1][0][0][0].item<int>(), 36);
  // Pictures of no pixels are refused, not turned into a canvas of none.
  write_bytes(dir / "empty-idx3-ubyte",
              std::string({0, 0, 0x08, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 5}));
  NPE_EXPECT_THROW_WITH(read_picture_collection(dir / "empty-idx3-ubyte", 0, PictureColour::Auto),
                        DataError, "none of them 0");
}

TEST_F(Pictures, WhatIsNotAPictureCollectionIsRefusedByName) {
  fs::create_directories(dir / "empty");
  NPE_EXPECT_THROW_WITH(read_picture_collection(dir / "empty", 0, PictureColour::Auto), DataError,
                        "holds no PNG or JPEG pictures");
  NPE_EXPECT_THROW_WITH(
      read_picture_collection(dir / "photos" / "cats" / "cat0.png", 0, PictureColour::Auto),
      DataError, "choose the folder");
  NPE_EXPECT_THROW_WITH(
      read_picture_collection(dir / "photos" / "notes.txt", 0, PictureColour::Auto), DataError,
      "not a folder of pictures");
  NPE_EXPECT_THROW_WITH(read_picture_collection(dir / "nowhere", 0, PictureColour::Auto), DataError,
                        "does not exist");
  fs::create_directories(dir / "broken");
  write_bytes(dir / "broken" / "a.jpg", "\xFF\xD8\xFF nothing");
  NPE_EXPECT_THROW_WITH(read_picture_collection(dir / "broken", 0, PictureColour::Auto), DataError,
                        "none of the 1 pictures");
  NPE_EXPECT_THROW_WITH(read_picture_collection(dir / "photos", 100000, PictureColour::Auto),
                        ConfigError, "size must be");
  NPE_EXPECT_THROW_WITH(make_task_source("pictures"), ConfigError, "--data FOLDER");
  NPE_EXPECT_THROW_WITH(
      make_task_source("pictures", {{"data", (dir / "photos").string()}, {"colour", "sepia"}}),
      ConfigError, "auto, grey or rgb");
}

TEST_F(Pictures, TasksAreSplitByPictureAndStoredDecided) {
  const auto source = make_task_source("pictures", {{"data", (dir / "photos").string()},
                                                    {"size", 16},
                                                    {"validation_fraction", 0.2},
                                                    {"test_fraction", 0.2}});
  const auto& pictures = dynamic_cast<const PictureTaskSource&>(*source);
  EXPECT_EQ(source->dim_x(), 2);
  EXPECT_EQ(source->dim_y(), 3);
  const auto json = source->to_json();
  EXPECT_EQ(json["size"], 16);
  EXPECT_EQ(json["colour"], "rgb");
  EXPECT_EQ(json["canvas"], 32);
  EXPECT_EQ(json["train_max_translation"], 8);
  // Every picture in exactly one split.
  int64_t total = 0;
  for (auto split : {Split::Train, Split::Validation, Split::Test}) {
    if (pictures.pictures(split).defined()) total += pictures.pictures(split).size(0);
  }
  EXPECT_EQ(total, 10);
  ASSERT_TRUE(pictures.pictures(Split::Train).defined());
  // Tasks: canvas coordinates in, three channels out in [0, 1]; the same for the same seed,
  // paired across translations; rebuilt from the stored configuration alike.
  const auto a = source->sample(3, 5);
  EXPECT_EQ(a.task.yc.size(2), 3);
  EXPECT_EQ(a.task.num_context() + a.task.num_targets(), 32 * 32);
  EXPECT_GE(a.task.yt.min().item<float>(), 0.0f);
  EXPECT_LE(a.task.yt.max().item<float>(), 1.0f);
  const auto moved = source->sample(3, 5, {3.0, -7.0});
  EXPECT_TRUE(torch::equal(moved.task.yt, a.task.yt));
  EXPECT_TRUE(torch::allclose(moved.task.xc - torch::tensor({3.0f, -7.0f}), a.task.xc));
  const auto rebuilt = task_source_from_json(json);
  EXPECT_TRUE(torch::equal(rebuilt->sample(3, 5).task.yt, a.task.yt));
  EXPECT_NE(pictures.describe().find("on a 32 x 32 canvas"), std::string::npos);

  // Everything held out: every picture is test data, and training draws are refused clearly.
  auto whole = json;
  whole["whole_file"] = true;
  const auto all = task_source_from_json(whole);
  EXPECT_EQ(dynamic_cast<const PictureTaskSource&>(*all).pictures(Split::Test).size(0), 10);
  NPE_EXPECT_THROW_WITH(all->sample(1, 0), DataError, "no pictures fall in the training split");
  // Adding pictures moves none of the others between splits.
  const auto names_in = [](const PictureTaskSource& source, Split split) {
    std::set<std::string> out;
    for (const auto i : source.indices(split))
      out.insert(source.data().names[static_cast<size_t>(i)]);
    return out;
  };
  for (int k = 6; k < 30; ++k) {
    write_png(dir / "photos" / "cats" / ("cat" + std::to_string(k) + ".png"),
              colour_picture(16, 16, k % 10));
  }
  // (Another colour setting: another read, not the one cached for this process.)
  const auto more = make_task_source("pictures", {{"data", (dir / "photos").string()},
                                                  {"size", 16},
                                                  {"colour", "grey"},
                                                  {"validation_fraction", 0.2},
                                                  {"test_fraction", 0.2}});
  const auto& bigger = dynamic_cast<const PictureTaskSource&>(*more);
  EXPECT_EQ(bigger.data().count(), 34);
  for (auto split : {Split::Train, Split::Validation, Split::Test}) {
    const auto before = names_in(pictures, split), after = names_in(bigger, split);
    for (const auto& name : before) EXPECT_EQ(after.count(name), 1u) << name;
  }
  EXPECT_GT(names_in(bigger, Split::Test).size(), 0u);
}

// Training that would meet an empty validation split refuses to start, saying why (it used to
// fail at the first validation, after the first hundred steps).
// The GUI reads a folder once per process and keeps it: pictures added to the folder (in a
// sub-folder too) while it runs are read by the next task source made from it; one made before
// keeps what it read.
TEST_F(Pictures, PicturesAddedToTheFolderAreReadByTheNextSource) {
  const nlohmann::json options = {{"data", (dir / "photos").string()}, {"size", 16}};
  const auto count = [](const TaskSource& source) {
    const auto& pictures = dynamic_cast<const PictureTaskSource&>(source);
    int64_t total = 0;
    for (auto split : {Split::Train, Split::Validation, Split::Test}) {
      if (pictures.pictures(split).defined()) total += pictures.pictures(split).size(0);
    }
    return total;
  };
  const auto before = make_task_source("pictures", options);
  EXPECT_EQ(count(*before), 10);
  EXPECT_EQ(count(*make_task_source("pictures", options)), 10);
  write_png(dir / "photos" / "cats" / "cat-new.png", colour_picture(16, 16, 9));
  const auto after = make_task_source("pictures", options);
  EXPECT_EQ(count(*after), 11);
  EXPECT_EQ(count(*before), 10);
  // A changed stamp for a rewritten file, the same for an untouched one.
  const auto stamp = dataset_stamp(dir / "photos");
  EXPECT_EQ(dataset_stamp(dir / "photos"), stamp);
  write_png(dir / "photos" / "cats" / "cat0.png", colour_picture(16, 20, 3));
  EXPECT_NE(dataset_stamp(dir / "photos"), stamp);
  EXPECT_EQ(dataset_stamp(dir / "missing"), "");
}

TEST_F(Pictures, TrainingWithoutValidationPicturesRefusesToStart) {
  TrainingSpec spec;
  spec.model = testing::tiny_config("cnp", 2, 3);
  spec.task = make_task_source(
                  "pictures",
                  {{"data", (dir / "photos").string()}, {"size", 8}, {"validation_fraction", 0.0}})
                  ->to_json();
  spec.options.validation_tasks = 4;
  NPE_EXPECT_THROW_WITH(TrainingJob{spec}, DataError, "no pictures fall in the validation split");
  spec.options.validation_tasks = 0;
  EXPECT_NO_THROW(TrainingJob{spec});
}

}  // namespace
}  // namespace npe
