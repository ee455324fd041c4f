#pragma once
// JPEG pictures into the image models without Qt, through libjpeg(-turbo), as float tensors of
// values in [0, 1] (0 = black), the image tasks' units: the photographs a user's folder holds.

#include <filesystem>

#include <torch/types.h>

namespace npe {

/// Reads a baseline or progressive JPEG as [height, width, channels] float32 in [0, 1]:
/// channels 1 converts to grey, 3 to RGB (CMYK and other colour spaces are converted by
/// libjpeg where it can, else refused). Throws DataError naming the file when it cannot be
/// read, is not a JPEG, is truncated or corrupt, or is larger than kLargestPngSide per side.
torch::Tensor read_jpeg(const std::filesystem::path& path, int channels);

}  // namespace npe
