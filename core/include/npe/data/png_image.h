#pragma once
// Pictures in and out of the image models without Qt: PNG files through libpng's simplified API,
// as float tensors of values in [0, 1] (0 = black), the image tasks' units.

#include <cstdint>
#include <filesystem>

#include <torch/types.h>

namespace npe {

/// Largest side read_png accepts: a bigger picture is refused before it is decoded.
constexpr int64_t kLargestPngSide = 16384;

/// Reads a PNG as [height, width, channels] float32 in [0, 1]: channels 1 converts any PNG to
/// grey, 3 to RGB (alpha is composited onto black, the canvas background). Throws DataError
/// naming the file when it cannot be read, is not a PNG, or is larger than kLargestPngSide.
torch::Tensor read_png(const std::filesystem::path& path, int channels);
/// read_png's pixels as they are stored, [height, width, channels] uint8 (0..255): what a
/// collection of many pictures keeps, at a quarter of the memory.
torch::Tensor read_png_bytes(const std::filesystem::path& path, int channels);

/// Writes [height, width, channels] (channels 1 or 3) values as an 8-bit PNG, each value clamped
/// to [0, 1] and scaled to 0..255 (NaN as 0). Atomic: nothing is written when it fails. Throws
/// DataError for other shapes or a file that cannot be written.
void write_png(const std::filesystem::path& path, const torch::Tensor& pixels);

}  // namespace npe
