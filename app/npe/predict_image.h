#pragma once
// npe predict --image: an image model's prediction of every pixel of a PNG picture from the
// pixels a mask marks as context, written as PNG pictures of the mean and standard deviation or
// as a CSV table of every pixel.

#include <cstdint>
#include <string>

namespace npe::cli {

struct ImagePredictArguments {
  std::string checkpoint;
  std::string image;  ///< PNG: grey or RGB, converted to the model's outputs (1 grey, 3 RGB)
  std::string mask;   ///< PNG of the same size: pixels at least half white are context
  int64_t chunk = 4096;
  std::string device = "cpu";
  std::string out;  ///< .png: the mean, and the standard deviation beside it (-std.png); .csv
};

/// The file the standard deviation goes to when `out` is a PNG: "NAME-std.png" beside it.
std::string stddev_png_path(const std::string& out);

/// Predicts and writes; prints what it wrote. Throws npe::Error for unreadable or unsuitable
/// files and models (before anything is written).
int run_predict_image(const ImagePredictArguments& args);

}  // namespace npe::cli
