#include "predict_image.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <torch/torch.h>

#include "commands.h"
#include "model_file.h"
#include "npe/data/masked_picture.h"
#include "npe/data/png_image.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/chunked_prediction.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"

namespace npe::cli {
namespace {

bool has_suffix(std::string path, const std::string& suffix) {
  std::transform(path.begin(), path.end(), path.begin(), ::tolower);
  return path.size() >= suffix.size() &&
         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "stem" for one output, "stem_1", "stem_2", ... for several (npe predict's naming).
std::string column_name(const char* stem, int64_t channel, int64_t channels) {
  return channels == 1 ? std::string(stem) : std::string(stem) + "_" + std::to_string(channel + 1);
}

}  // namespace

std::string stddev_png_path(const std::string& out) {
  const std::filesystem::path path(out);
  return (path.parent_path() / (path.stem().string() + "-std.png")).string();
}

int run_predict_image(const ImagePredictArguments& a) {
  const bool png_out = has_suffix(a.out, ".png");
  if (!png_out && !has_suffix(a.out, ".csv")) {
    throw UsageError(
        "--image writes .png (the mean, and its standard deviation as NAME-std.png) "
        "or .csv (every pixel): '" +
        a.out + "' is neither");
  }
  const auto metadata = read_model_metadata(a.checkpoint);
  const int64_t channels = metadata.model.dim_y;
  if (metadata.model.dim_x != 2 || (channels != 1 && channels != 3)) {
    throw DataError(
        "--image needs a model of pictures (2 inputs: row and column; 1 output for "
        "grey or 3 for RGB); '" +
        a.checkpoint + "' takes " + std::to_string(metadata.model.dim_x) + " inputs and gives " +
        std::to_string(channels) + " outputs");
  }
  const auto picture = read_png(a.image, static_cast<int>(channels));  // [H, W, C]
  const int64_t height = picture.size(0), width = picture.size(1);
  const auto masked = [&] {
    try {
      return masked_picture_task(picture, read_png(a.mask, 1));
    } catch (const InvalidInputError& e) {
      throw DataError("'" + a.mask + "' for '" + a.image + "': " + e.what());
    }
  }();
  const int64_t n = height * width, nc = masked.num_context();
  const auto& is_context = masked.is_context;
  const auto& y = masked.values;

  auto predictor = load_model_file(a.checkpoint, parse_device(a.device));
  const auto prediction = predict_in_chunks(*predictor, masked.task, a.chunk);
  const auto mean = prediction.mean[0];
  const auto stddev = prediction.stddev[0];

  if (png_out) {
    const auto std_path = stddev_png_path(a.out);
    write_png(std_path, stddev.reshape({height, width, channels}));
    write_png(a.out, mean.reshape({height, width, channels}));
    std::printf(
        "wrote %s (mean) and %s (standard deviation), %lld x %lld pixels from %lld "
        "context pixels\n",
        a.out.c_str(), std_path.c_str(), static_cast<long long>(width),
        static_cast<long long>(height), static_cast<long long>(nc));
    return 0;
  }
  PointTable table;
  table.columns = {"row", "column"};
  for (int64_t c = 0; c < channels; ++c) table.columns.push_back(column_name("y", c, channels));
  table.columns.push_back("context");
  for (int64_t c = 0; c < channels; ++c) table.columns.push_back(column_name("mean", c, channels));
  for (int64_t c = 0; c < channels; ++c) table.columns.push_back(column_name("std", c, channels));
  const auto y_a = y.accessor<float, 2>();
  const auto mean_a = mean.accessor<float, 2>();
  const auto std_a = stddev.accessor<float, 2>();
  const auto context_a = is_context.accessor<bool, 1>();
  table.rows.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> row = {static_cast<double>(i / width), static_cast<double>(i % width)};
    for (int64_t c = 0; c < channels; ++c) row.push_back(y_a[i][c]);
    row.push_back(context_a[i] ? 1.0 : 0.0);
    for (int64_t c = 0; c < channels; ++c) row.push_back(mean_a[i][c]);
    for (int64_t c = 0; c < channels; ++c) row.push_back(std_a[i][c]);
    table.rows.push_back(std::move(row));
  }
  write_point_table(a.out, table);
  std::printf(
      "wrote %s: %lld pixels (row, column, truth, context flag, mean, std) from %lld "
      "context pixels\n",
      a.out.c_str(), static_cast<long long>(n), static_cast<long long>(nc));
  return 0;
}

}  // namespace npe::cli
