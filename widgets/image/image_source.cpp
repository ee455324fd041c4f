#include "image/image_source.h"

#include <algorithm>

#include <QImage>
#include <QImageReader>
#include <QPainter>

#include <torch/torch.h>

#include "npe/data/image_tasks.h"
#include "npe/data/picture_tasks.h"
#include "npe/errors.h"

namespace npe::widgets {
namespace {

// The test split the image tab browses: Fashion-MNIST's t10k file.
torch::Tensor test_images() {
  static const auto images = [] {
    return read_mnist(default_fashion_mnist_dir() / "t10k-images-idx3-ubyte.gz").images;
  }();
  return images;
}

}  // namespace

ImageSource test_image(int index) {
  auto images = test_images();
  if (index < 0 || index >= images.size(0)) {
    throw DataError("test image " + std::to_string(index) + " does not exist (0.." +
                    std::to_string(images.size(0) - 1) + ")");
  }
  ImageSource source;
  source.test_index = index;
  source.pixels = images[index].to(torch::kFloat32).div(255.0).contiguous();
  source.description = QObject::tr("Fashion-MNIST test image %1").arg(index);
  return source;
}

int test_image_count() {
  try {
    return static_cast<int>(test_images().size(0));
  } catch (const Error&) {
    return 0;
  }
}

ImageSource collection_picture(const PictureTaskSource& pictures, int index,
                               const QString& collection, const QString& name) {
  const auto& test = pictures.pictures(Split::Test);
  if (index < 0 || index >= test.size(0)) {
    throw DataError("test picture " + std::to_string(index) + " of " + name.toStdString() +
                    "'s data does not exist (0.." + std::to_string(test.size(0) - 1) + ")");
  }
  ImageSource source;
  source.test_index = index;
  source.collection = collection;
  // [size, size, C] uint8: grey pictures as [size, size], as the tab holds them.
  auto pixels = test[index].to(torch::kFloat32).div(255.0);
  if (pixels.size(2) == 1) pixels = pixels.squeeze(2);
  source.pixels = pixels.contiguous();
  source.description =
      QObject::tr("test picture %1 of %2's data (%3×%3, %4)")
          .arg(index)
          .arg(name)
          .arg(pixels.size(0))
          .arg(source.channels() == 1 ? QObject::tr("grey") : QObject::tr("colour"));
  return source;
}

ImageSource picture_file(const QString& path, int side, int channels) {
  if (side < 1 || (channels != 1 && channels != 3)) {
    throw DataError("pictures are shown grey or in colour, at least one pixel wide");
  }
  QImageReader reader(path);
  reader.setAutoTransform(true);
  // The tab shows pictures at side x side: a large one is decoded scaled to at most
  // kLargestDecodedSide on its longer side, where its format can (JPEG decodes at a fraction
  // of the size). Formats that decode at full size first (PNG) need the whole picture in
  // memory once: Qt refuses more than 128 MB by default (an 8,000 x 8,000 colour picture is
  // 256 MB), so the limit is raised to kPictureAllocationLimitMb for this read.
  constexpr int kLargestDecodedSide = 1024;
  constexpr int kPictureAllocationLimitMb = 1024;  // up to about 16,000 x 16,000 in colour
  const QSize full = reader.size();
  if (full.isValid() &&
      (full.width() > kLargestDecodedSide || full.height() > kLargestDecodedSide)) {
    reader.setScaledSize(
        full.scaled(kLargestDecodedSide, kLargestDecodedSide, Qt::KeepAspectRatio));
  }
  const int previous_limit = QImageReader::allocationLimit();
  QImageReader::setAllocationLimit(std::max(previous_limit, kPictureAllocationLimitMb));
  QImage image = reader.read();
  QImageReader::setAllocationLimit(previous_limit);
  if (image.isNull()) {
    throw DataError(("cannot read picture '" + path + "': " + reader.errorString()).toStdString());
  }
  const QSize original = full.isValid() ? full : image.size();
  const bool colour = channels == 3;
  image = image.convertToFormat(colour ? QImage::Format_RGB888 : QImage::Format_Grayscale8);
  const auto scaled = image.scaled(side, side, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  // Light backgrounds of grey pictures (photos of objects on paper) are inverted so the object
  // is bright on the dark canvas, as in Fashion-MNIST. Decided from the border pixels.
  bool invert = false;
  if (!colour) {
    double border = 0.0;
    int count = 0;
    for (int x = 0; x < scaled.width(); ++x) {
      border += qGray(scaled.pixel(x, 0)) + qGray(scaled.pixel(x, scaled.height() - 1));
      count += 2;
    }
    invert = count > 0 && border / count > 127.0;
  }
  auto pixels = torch::zeros({side, side, channels}, torch::kFloat32);
  auto access = pixels.accessor<float, 3>();
  const int top = (side - scaled.height()) / 2;
  const int left = (side - scaled.width()) / 2;
  for (int r = 0; r < scaled.height(); ++r) {
    for (int c = 0; c < scaled.width(); ++c) {
      const QRgb rgb = scaled.pixel(c, r);
      if (colour) {
        access[top + r][left + c][0] = static_cast<float>(qRed(rgb) / 255.0);
        access[top + r][left + c][1] = static_cast<float>(qGreen(rgb) / 255.0);
        access[top + r][left + c][2] = static_cast<float>(qBlue(rgb) / 255.0);
      } else {
        const double v = qGray(rgb) / 255.0;
        access[top + r][left + c][0] = static_cast<float>(invert ? 1.0 - v : v);
      }
    }
  }
  ImageSource source;
  source.test_index = -1;
  source.file_path = path;
  source.pixels = colour ? pixels : pixels.squeeze(2).contiguous();
  source.description = QObject::tr("%1 (%2×%3, %4%5)")
                           .arg(path.section('/', -1))
                           .arg(original.width())
                           .arg(original.height())
                           .arg(colour ? QObject::tr("colour") : QObject::tr("grey"))
                           .arg(invert ? QObject::tr(", inverted") : QString());
  return source;
}

QStringList picture_suffixes() {
  QStringList suffixes;
  for (const auto& format : QImageReader::supportedImageFormats()) {
    suffixes << QString::fromLatin1(format).toLower();
  }
  return suffixes;
}

}  // namespace npe::widgets
