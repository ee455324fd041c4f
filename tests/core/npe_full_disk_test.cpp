// A disk that fills up while one of the project's files is written (a file-size limit stands in
// for it: the write fails with EFBIG as a full disk fails with ENOSPC). Every writer throws an
// error naming the file and saying why, the file written before stays byte for byte as it was,
// and no temporary is left beside it. Checkpoints: Checkpoints.AFullDiskDuringASave...; npe
// train: NpeTrainJob.AFullDiskDuringACheckpoint...; GUI sessions and exports: the function
// explorer's test.

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "npe/data/gridded_writer.h"
#include "npe/data/png_image.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class FullDisk : public testing::TemporaryFolderTest {
 protected:
  // `write_again` replaces `path` (alone in its folder) with a file at least as large.
  void expect_the_old_file_kept(const fs::path& path, const std::function<void()>& write_again) {
    const auto before = read_bytes(path);
    ASSERT_GT(before.size(), 16u);
    {
      testing::FileSizeLimit limit(before.size() / 2);
      try {
        write_again();
        ADD_FAILURE() << "no error for " << path;
      } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("'" + path.string() + "'"), std::string::npos) << message;
        EXPECT_NE(message.find("File too large"), std::string::npos) << message;
      }
    }
    EXPECT_TRUE(read_bytes(path) == before) << path << " changed";
    size_t files = 0;
    for ([[maybe_unused]] const auto& item : fs::directory_iterator(path.parent_path())) ++files;
    EXPECT_EQ(files, 1u) << "a temporary was left beside " << path;
  }
};

TEST_F(FullDisk, APredictionTableKeepsTheOldCsv) {
  auto table_of = [](int rows) {
    PointTable table;
    table.columns = {"x", "mean", "std"};
    for (int i = 0; i < rows; ++i) table.rows.push_back({0.001 * i, 0.5 + 1e-4 * i, 0.25});
    return table;
  };
  const auto path = dir / "csv" / "predictions.csv";
  fs::create_directories(path.parent_path());
  write_point_table(path, table_of(20));
  expect_the_old_file_kept(path, [&] { write_point_table(path, table_of(2000)); });
}

TEST_F(FullDisk, AGridKeepsTheOldNetcdf) {
  auto grid_of = [](int side) {
    GridOutput output;
    for (int i = 0; i < side; ++i) {
      output.latitudes.push_back(60.0 - 0.25 * i);
      output.longitudes.push_back(-10.0 + 0.25 * i);
    }
    output.variables.push_back({"mean", "predicted temperature", "K", "air_temperature",
                                torch::rand({side, side}) + 280.0});
    return output;
  };
  const auto path = dir / "nc" / "mean.nc";
  fs::create_directories(path.parent_path());
  write_grid_netcdf(path, grid_of(8));
  expect_the_old_file_kept(path, [&] { write_grid_netcdf(path, grid_of(64)); });
}

TEST_F(FullDisk, AnImageKeepsTheOldPng) {
  const auto path = dir / "png" / "mean.png";
  fs::create_directories(path.parent_path());
  torch::manual_seed(3);
  write_png(path, torch::rand({16, 16, 1}));  // noise: compression cannot shrink the larger one
  expect_the_old_file_kept(path, [&] { write_png(path, torch::rand({128, 128, 3})); });
}

}  // namespace
}  // namespace npe
