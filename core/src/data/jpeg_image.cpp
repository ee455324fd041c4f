#include "npe/data/jpeg_image.h"

#include <csetjmp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include <torch/torch.h>

#include "npe/data/png_image.h"
#include "npe/errors.h"

namespace npe {
namespace {

// libjpeg reports errors through a callback that must not return: it jumps back to read_jpeg
// with the message kept, instead of libjpeg's default (print and exit the process).
struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr info) {
  auto* manager = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  std::longjmp(manager->jump, 1);
}

// Warnings (a corrupt-but-decodable stream) are counted by libjpeg; the last one is kept for the
// error message, nothing is printed.
void on_message(j_common_ptr info, int level) {
  if (level >= 0) return;  // trace messages
  auto* manager = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  ++info->err->num_warnings;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

torch::Tensor read_jpeg_bytes(const std::filesystem::path& path, int channels) {
  if (channels != 1 && channels != 3) {
    throw DataError("read_jpeg_bytes: channels must be 1 (grey) or 3 (RGB)");
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw DataError("'" + path.string() + "' cannot be opened");
  // Everything the jump may skip over lives outside the setjmp scope (no destructors skipped).
  jpeg_decompress_struct info{};
  ErrorManager errors{};
  std::vector<unsigned char> bytes;
  int64_t height = 0, width = 0;
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = on_error;
  errors.base.emit_message = on_message;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&info);
    throw DataError("'" + path.string() + "': not a readable JPEG (" + errors.message + ")");
  }
  jpeg_create_decompress(&info);
  jpeg_stdio_src(&info, file.get());
  jpeg_read_header(&info, TRUE);
  if (info.image_width == 0 || info.image_height == 0 || info.image_width > kLargestPngSide ||
      info.image_height > kLargestPngSide) {
    const auto size = std::to_string(info.image_width) + " x " + std::to_string(info.image_height);
    jpeg_destroy_decompress(&info);
    throw DataError("'" + path.string() + "' is " + size + " pixels; at most " +
                    std::to_string(kLargestPngSide) + " per side are read");
  }
  info.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&info);
  height = info.output_height;
  width = info.output_width;
  const int64_t row_bytes = width * info.output_components;
  bytes.resize(static_cast<size_t>(height * row_bytes));
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = bytes.data() + static_cast<int64_t>(info.output_scanline) * row_bytes;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  // libjpeg decodes a truncated or damaged stream with a warning and fills the rest with grey:
  // a picture that is partly invented is refused, not trained on.
  const long warnings = errors.base.num_warnings;
  jpeg_destroy_decompress(&info);
  if (warnings > 0) {
    throw DataError("'" + path.string() + "' is truncated or corrupt (libjpeg: " +
                    std::string(errors.message[0] ? errors.message : "damaged data") + ")");
  }
  return torch::from_blob(bytes.data(), {height, width, channels}, torch::kUInt8).clone();
}

}  // namespace npe
