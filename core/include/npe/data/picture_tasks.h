#pragma once
// Translated picture-completion tasks on the user's own pictures (a folder of PNG/JPEG files,
// an IDX file or CIFAR-10's binary batches), grey or colour: the paper's T-MNIST protocol
// (Appendix F.2) on any pictures, by default its T-CIFAR10 sizes (a 32 x 32 picture on a
// 64 x 64 canvas, |h|, |v| <= 16).

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "npe/data/image_tasks.h"
#include "npe/data/picture_collection.h"
#include "npe/data/task_source.h"

namespace npe {

/// Configuration of picture tasks. Settings left at their "from the data" value (size 0,
/// colour auto, canvas 0, translations -1) are decided when the pictures are read and stored
/// decided, so that a checkpoint says what its model takes. Inputs are canvas pixel coordinates
/// (D_x = 2), outputs the pixel values / 255 per channel (D_y = 1 grey or 3 RGB), the units
/// every image model of this program works in.
///
/// Split by picture: each picture's file name (or batch and index) is hashed to a number in
/// [0, 1); below validation_fraction it is a validation picture, below validation_fraction +
/// test_fraction a test one, else a training one (a picture keeps its split when others are added
/// to the folder). CIFAR-10's test_batch.bin is the test split as the dataset defines it.
struct PictureTaskConfig {
  std::string name = "pictures";
  std::filesystem::path data;
  int64_t size = 0;                    ///< square side pictures are brought to; 0: their own
  std::string colour = "auto";         ///< auto, grey or rgb
  int64_t canvas = 0;                  ///< 0: twice the size
  int64_t train_max_translation = -1;  ///< -1: half the size
  int64_t test_max_translation = -1;   ///< -1: the training one
  double min_context_fraction = 0.01;
  double max_context_fraction = 1.0 / 3.0;
  int64_t max_targets = 0;
  bool targets_include_context = false;
  double validation_fraction = 0.1;
  double test_fraction = 0.1;
  /// Every picture is test data (a model evaluated on pictures it was not trained on).
  bool whole_file = false;

  nlohmann::json to_json() const;
  static PictureTaskConfig from_json(const nlohmann::json& json);
  void validate() const;
};

class PictureTaskSource final : public TaskSource {
 public:
  /// Reads the pictures (once per folder, size and colour in a process). Throws ConfigError
  /// without data or for bad settings, DataError when the pictures cannot be read or a split
  /// gets none.
  explicit PictureTaskSource(PictureTaskConfig config);

  std::string name() const override { return m_config.name; }
  int64_t dim_x() const override { return 2; }
  int64_t dim_y() const override { return m_data->channels(); }
  TaskBatch sample(int64_t batch_size, uint64_t seed, const Translation& tau = {},
                   Split split = Split::Train) const override;
  nlohmann::json to_json() const override { return m_config.to_json(); }
  /// Ten pixels beyond the training window in both directions.
  Translation out_of_range_translation() const override;

  const PictureTaskConfig& config() const { return m_config; }
  const PictureCollection& data() const { return *m_data; }
  /// The pictures of a split, [N, size, size, channels] uint8.
  const torch::Tensor& pictures(Split split) const;
  /// Which pictures of data() a split holds (indices, in the data's order).
  const std::vector<int64_t>& indices(Split split) const {
    return m_indices[static_cast<size_t>(split)];
  }
  /// What was read and how it is split, in words.
  std::string describe() const override;

 private:
  PictureTaskConfig m_config;
  std::shared_ptr<const PictureCollection> m_data;
  std::array<std::vector<int64_t>, 3> m_indices;  // by Split
  torch::Tensor m_train, m_validation, m_test;
};

}  // namespace npe
