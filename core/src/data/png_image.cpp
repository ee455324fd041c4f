#include "npe/data/png_image.h"

#include <png.h>

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "npe/atomic_file.h"
#include "npe/errors.h"

namespace npe {
namespace {

// Releases what png_image_begin_read_* allocated, on every path out.
struct ImageGuard {
  png_image* image;
  ~ImageGuard() { png_image_free(image); }
};

std::string message_of(const png_image& image) {
  return image.message[0] ? std::string(image.message) : std::string("not a readable PNG");
}

}  // namespace

torch::Tensor read_png(const std::filesystem::path& path, int channels) {
  return read_png_bytes(path, channels).to(torch::kFloat32).div_(255.0f);
}

torch::Tensor read_png_bytes(const std::filesystem::path& path, int channels) {
  if (channels != 1 && channels != 3) {
    throw DataError("read_png: channels must be 1 (grey) or 3 (RGB)");
  }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ImageGuard guard{&image};
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    throw DataError("'" + path.string() + "': " + message_of(image));
  }
  if (image.width == 0 || image.height == 0 || image.width > kLargestPngSide ||
      image.height > kLargestPngSide) {
    throw DataError("'" + path.string() + "' is " + std::to_string(image.width) + " x " +
                    std::to_string(image.height) + " pixels; at most " +
                    std::to_string(kLargestPngSide) + " per side are read");
  }
  image.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  const png_color black{0, 0, 0};
  std::vector<png_byte> bytes(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, &black, bytes.data(), 0, nullptr)) {
    throw DataError("'" + path.string() + "': " + message_of(image));
  }
  const auto h = static_cast<int64_t>(image.height), w = static_cast<int64_t>(image.width);
  return torch::from_blob(bytes.data(), {h, w, channels}, torch::kUInt8).clone();
}

void write_png(const std::filesystem::path& path, const torch::Tensor& pixels) {
  if (pixels.dim() != 3 || (pixels.size(2) != 1 && pixels.size(2) != 3) || pixels.size(0) < 1 ||
      pixels.size(1) < 1 || pixels.size(0) > kLargestPngSide || pixels.size(1) > kLargestPngSide) {
    throw DataError("write_png '" + path.string() + "': expected [height, width, 1 or 3] values");
  }
  const auto bytes = torch::nan_to_num(pixels.detach().to(torch::kCPU, torch::kFloat32), 0.0)
                         .clamp(0.0, 1.0)
                         .mul(255.0)
                         .round()
                         .to(torch::kUInt8)
                         .contiguous();
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(pixels.size(1));
  image.height = static_cast<png_uint_32>(pixels.size(0));
  image.format = pixels.size(2) == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  // First call: the encoded size; second: the encoding.
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, bytes.data_ptr(), 0, nullptr)) {
    throw DataError("write_png '" + path.string() + "': " + message_of(image));
  }
  std::string encoded(size, '\0');
  if (!png_image_write_to_memory(&image, encoded.data(), &size, 0, bytes.data_ptr(), 0, nullptr)) {
    throw DataError("write_png '" + path.string() + "': " + message_of(image));
  }
  encoded.resize(size);
  try {
    write_file_atomically(path, encoded);
  } catch (const Error& e) {
    throw DataError(e.what());
  }
}

}  // namespace npe
