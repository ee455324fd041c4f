#pragma once
// Reader for the IDX format of MNIST and Fashion-MNIST (plain or gzip-compressed).

#include <cstdint>
#include <filesystem>
#include <vector>

#include <torch/types.h>

namespace npe {

/// An IDX array of unsigned bytes (type code 0x08): dims and row-major data as a uint8 tensor.
/// Throws DataError naming the file when it is missing, not IDX (wrong magic), of another
/// element type, or shorter than its header says. Files ending in .gz are decompressed.
torch::Tensor read_idx_ubyte(const std::filesystem::path& path);

/// Images [N, H, W] and labels [N] (both uint8) of an MNIST-format dataset.
struct ImageDataset {
  torch::Tensor images;
  torch::Tensor labels;
  int64_t size() const { return images.size(0); }
};

/// Reads an image file (3-D IDX) and its label file (1-D IDX). Throws DataError when either
/// cannot be read or their counts differ. The label file may be empty (no labels).
ImageDataset read_mnist(const std::filesystem::path& images_path,
                        const std::filesystem::path& labels_path = {});

}  // namespace npe
