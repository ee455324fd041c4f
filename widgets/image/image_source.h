#pragma once
// The ground-truth picture of the image tab: a Fashion-MNIST test image, a test picture of the
// data a model was trained on (its own pictures: grey or colour, of their size), or the user's
// own picture, with values in [0, 1] (0 = the canvas background).

#include <QString>

#include <torch/types.h>

namespace npe {
class PictureTaskSource;
}

namespace npe::widgets {

struct ImageSource {
  /// Side of a Fashion-MNIST picture (on the tab's 56-pixel canvas).
  static constexpr int kSide = 28;
  /// Index in its test set (>= 0), or -1 for a user picture.
  int test_index = 0;
  /// The model whose data's test split test_index counts in; empty: Fashion-MNIST's.
  QString collection;
  QString file_path;     ///< the user picture's path when test_index < 0
  torch::Tensor pixels;  ///< grey [side, side] or colour [side, side, 3], float32 in [0, 1]
  QString description;

  int side() const { return pixels.defined() ? int(pixels.size(0)) : kSide; }
  int channels() const { return pixels.defined() && pixels.dim() == 3 ? int(pixels.size(2)) : 1; }
};

/// Test image `index` of Fashion-MNIST (npe::default_fashion_mnist_dir()). Throws
/// npe::DataError when the dataset cannot be read or the index is out of range.
ImageSource test_image(int index);
/// Number of test images available (0 when the dataset cannot be read).
int test_image_count();

/// Test picture `index` of the pictures a model was trained on (`collection`: the model's id,
/// `name`: its name). Throws npe::DataError for an index out of range.
ImageSource collection_picture(const PictureTaskSource& pictures, int index,
                               const QString& collection, const QString& name);

/// A picture file (PNG, JPEG, BMP, ... anything QImage reads) fitted into side x side keeping
/// its aspect ratio, in grey (channels 1) or colour (3). A grey one is inverted when its
/// background is light (Fashion-MNIST is light on dark; the canvas background is 0); colour is
/// kept as it is, as the pictures of a colour model's data are. Throws npe::DataError for
/// unreadable files.
ImageSource picture_file(const QString& path, int side = ImageSource::kSide, int channels = 1);

/// File suffixes picture_file() understands (lower case).
QStringList picture_suffixes();

}  // namespace npe::widgets
