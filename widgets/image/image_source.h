#pragma once
// The ground-truth picture of the image tab: a Fashion-MNIST test image or the user's own
// picture, as a 28 x 28 grey image with values in [0, 1] (0 = the canvas background).

#include <QString>

#include <torch/types.h>

namespace npe::widgets {

struct ImageSource {
  static constexpr int kSide = 28;
  /// Test-set index (>= 0) or -1 for a user picture.
  int test_index = 0;
  QString file_path;     ///< the user picture's path when test_index < 0
  torch::Tensor pixels;  ///< [28, 28] float32 in [0, 1]
  QString description;
};

/// Test image `index` of Fashion-MNIST (npe::default_fashion_mnist_dir()). Throws
/// npe::DataError when the dataset cannot be read or the index is out of range.
ImageSource test_image(int index);
/// Number of test images available (0 when the dataset cannot be read).
int test_image_count();

/// A picture file (PNG, JPEG, BMP, ... anything QImage reads) converted to grey, fitted into
/// 28 x 28 keeping its aspect ratio, and inverted when its background is light (Fashion-MNIST
/// is light on dark; the canvas background is 0). Throws npe::DataError for unreadable files.
ImageSource picture_file(const QString& path);

/// File suffixes picture_file() understands (lower case).
QStringList picture_suffixes();

}  // namespace npe::widgets
