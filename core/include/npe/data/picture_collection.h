#pragma once
// A user's pictures as one array: a folder of PNG and JPEG files (searched recursively, as
// class-per-folder datasets are laid out), an IDX file (MNIST's format) or CIFAR-10's binary
// batches, grey or colour, brought to one square size. What the `pictures` tasks draw from.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <torch/types.h>

namespace npe {

/// How many channels the pictures are read with.
enum class PictureColour {
  Auto,  ///< RGB when any picture has colour, else grey
  Grey,  ///< one channel (colour converted by luminance)
  Rgb,   ///< three channels (grey repeated)
};
PictureColour picture_colour_from_string(const std::string& text);  ///< "auto", "grey", "rgb"
std::string to_string(PictureColour colour);

/// The largest square side pictures are brought to: a 64 x 64 canvas of 4096 points is already
/// more than the paper's models are trained on.
constexpr int64_t kLargestPictureSize = 512;

struct PictureCollection {
  std::string format;              ///< "PNG/JPEG folder", "IDX", "CIFAR-10 binary"
  torch::Tensor pictures;          ///< [N, size, size, channels] uint8
  std::vector<std::string> names;  ///< per picture: its file (folders), "FILE#index" (batches)
  /// Per picture: whether its file is a test file of the dataset's own (CIFAR-10's
  /// test_batch.bin), which the tasks then hold out as the test split.
  std::vector<bool> dataset_test;
  int64_t resized = 0;           ///< pictures brought to the size from another one
  int64_t unreadable = 0;        ///< files of a folder that could not be read (skipped)
  std::string first_unreadable;  ///< the first of them, with the reason
  std::vector<std::string> notes;

  int64_t count() const { return pictures.size(0); }
  /// Whether the dataset names its own test pictures (then no others are drawn for testing).
  bool has_own_test_split() const {
    for (const bool t : dataset_test) {
      if (t) return true;
    }
    return false;
  }
  int64_t size() const { return pictures.size(1); }
  int64_t channels() const { return pictures.size(3); }
  /// What was read, in words (for the Training tab's preview and npe train's first lines).
  std::string describe() const;
};

/// Reads every picture at `path`, brought to size x size: each is scaled so that its shorter
/// side is `size` (averaging pixels when shrinking, bilinear when enlarging) and its centre
/// cropped square. size 0 keeps the pictures' own size where all have one square size of at
/// most 64 pixels, else 32. A collection that would take over 16 GiB is refused first. Folders:
/// *.png, *.jpg and *.jpeg in any letter case, in sub-folders too, hidden ones skipped, files that
/// cannot be read skipped and counted (an error when none can). A folder holding data_batch_1.bin
/// is CIFAR-10's binary version; a file of 3,073-byte records is one of its batches; a file
/// starting with IDX's magic is IDX (3-D grey, or 4-D with 1 or 3 channels last). Throws DataError
/// naming the file for anything else.
PictureCollection read_picture_collection(const std::filesystem::path& path, int64_t size,
                                          PictureColour colour);

}  // namespace npe
