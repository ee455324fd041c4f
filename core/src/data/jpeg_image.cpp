#include "npe/data/jpeg_image.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

// jpeglib.h needs FILE and size_t declared first; jerror.h names the warnings.
#include <jerror.h>
#include <jpeglib.h>

#include <torch/torch.h>

#include "npe/data/png_image.h"
#include "npe/errors.h"

namespace npe {
namespace {

// libjpeg reports errors through a callback that must not return: it jumps back to decode()
// with the message kept, instead of libjpeg's default (print and exit the process).
struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  /// A warning that means pixels are missing or invented (see on_message).
  bool damaged;
};

void on_error(j_common_ptr info) {
  auto* manager = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  std::longjmp(manager->jump, 1);
}

// Warnings are not printed. Those that mean the stream ended early or lost its place (libjpeg
// then fills the rest with grey) mark the picture damaged; harmless ones (extraneous bytes
// before a marker, an unknown JFIF revision), common in camera and web photographs, do not.
void on_message(j_common_ptr info, int level) {
  if (level >= 0) return;  // trace messages
  auto* manager = reinterpret_cast<ErrorManager*>(info->err);
  const int code = info->err->msg_code;
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_MUST_RESYNC) {
    manager->damaged = true;
    (*info->err->format_message)(info, manager->message);
  }
  ++info->err->num_warnings;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// What a decoding makes, owned by the caller: decode() holds only pointers across its setjmp,
// so a jump back leaves nothing of indeterminate value and no C++ object half-built.
struct Decoding {
  jpeg_decompress_struct info;
  ErrorManager errors;
  std::vector<unsigned char> bytes;
  int64_t height = 0, width = 0;
  bool too_large = false;
};

// false when libjpeg gave up (its message in d->errors.message).
bool decode(std::FILE* file, int channels, Decoding* d) {
  d->info.err = jpeg_std_error(&d->errors.base);
  d->errors.base.error_exit = on_error;
  d->errors.base.emit_message = on_message;
  if (setjmp(d->errors.jump)) {
    jpeg_destroy_decompress(&d->info);
    return false;
  }
  jpeg_create_decompress(&d->info);
  jpeg_stdio_src(&d->info, file);
  jpeg_read_header(&d->info, TRUE);
  d->height = d->info.image_height;
  d->width = d->info.image_width;
  if (d->height == 0 || d->width == 0 || d->height > kLargestPngSide ||
      d->width > kLargestPngSide) {
    d->too_large = true;
    jpeg_destroy_decompress(&d->info);
    return true;
  }
  d->info.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&d->info);
  d->height = d->info.output_height;
  d->width = d->info.output_width;
  const int64_t row_bytes = d->width * d->info.output_components;
  d->bytes.resize(static_cast<size_t>(d->height * row_bytes));
  while (d->info.output_scanline < d->info.output_height) {
    JSAMPROW row = d->bytes.data() + static_cast<int64_t>(d->info.output_scanline) * row_bytes;
    jpeg_read_scanlines(&d->info, &row, 1);
  }
  jpeg_finish_decompress(&d->info);
  jpeg_destroy_decompress(&d->info);
  return true;
}

}  // namespace

torch::Tensor read_jpeg_bytes(const std::filesystem::path& path, int channels) {
  if (channels != 1 && channels != 3) {
    throw DataError("read_jpeg_bytes: channels must be 1 (grey) or 3 (RGB)");
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw DataError("'" + path.string() + "' cannot be opened");
  auto d = std::make_unique<Decoding>();
  std::memset(&d->info, 0, sizeof d->info);
  std::memset(&d->errors, 0, sizeof d->errors);
  if (!decode(file.get(), channels, d.get())) {
    throw DataError("'" + path.string() + "': not a readable JPEG (" + d->errors.message + ")");
  }
  if (d->too_large) {
    throw DataError("'" + path.string() + "' is " + std::to_string(d->width) + " x " +
                    std::to_string(d->height) + " pixels; at most " +
                    std::to_string(kLargestPngSide) + " per side are read");
  }
  // A picture that is partly invented (libjpeg filled what was missing with grey) is refused,
  // not trained on.
  if (d->errors.damaged) {
    throw DataError("'" + path.string() +
                    "' is truncated or corrupt (libjpeg: " + d->errors.message + ")");
  }
  return torch::from_blob(d->bytes.data(), {d->height, d->width, channels}, torch::kUInt8).clone();
}

}  // namespace npe
