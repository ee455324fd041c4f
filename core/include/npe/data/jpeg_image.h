#pragma once
// JPEG pictures without Qt, through libjpeg(-turbo), as their 8-bit values: the photographs a
// user's folder of pictures holds.

#include <filesystem>

#include <torch/types.h>

namespace npe {

/// Reads a baseline or progressive JPEG as [height, width, channels] uint8 (0 = black):
/// channels 1 converts to grey, 3 to RGB (CMYK and other colour spaces are converted by
/// libjpeg where it can, else refused). Throws DataError naming the file when it cannot be
/// read, is not a JPEG, is truncated or corrupt, or is larger than kLargestPngSide per side.
torch::Tensor read_jpeg_bytes(const std::filesystem::path& path, int channels);

}  // namespace npe
