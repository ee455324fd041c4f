// The pictures a user's folder holds: PNG (libpng) and JPEG (libjpeg-turbo, whose errors jump
// back through setjmp), decoded as the pictures task does; the first input byte chooses.

#include <cstddef>
#include <cstdint>

#include <torch/torch.h>

#include "npe/data/jpeg_image.h"
#include "npe/data/png_image.h"
#include "npe/errors.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static npe::fuzz::ScratchFile png(".png"), jpeg(".jpg");
  if (size < 1) return 0;
  const bool is_jpeg = data[0] & 1;
  const int channels = data[0] & 2 ? 3 : 1;
  try {
    const auto& path = (is_jpeg ? jpeg : png).write(data + 1, size - 1);
    const auto pixels =
        is_jpeg ? npe::read_jpeg_bytes(path, channels) : npe::read_png_bytes(path, channels);
    (void)pixels.sum();
  } catch (const npe::DataError&) {
  }
  return 0;
}
