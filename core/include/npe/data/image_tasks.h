#pragma once
// Translated image-completion tasks (the paper's T-MNIST protocol, Appendix F.2) on any
// MNIST-format dataset; the default is Debian's Fashion-MNIST (T-FashionMNIST).

#include <filesystem>
#include <memory>
#include <string>

#include "npe/data/idx.h"
#include "npe/data/task_source.h"

namespace npe {

/// Where Debian's dataset-fashion-mnist installs the data; $NPE_FASHION_MNIST_DIR overrides.
std::filesystem::path default_fashion_mnist_dir();

/// Configuration of translated image tasks. Each image (H x W, grey) is placed on a zero
/// canvas of side `canvas` at a whole-pixel translation (h, v) ~ U{-T..T} per axis, where T is
/// train_max_translation for the training and validation splits and test_max_translation for
/// the test split. Inputs are pixel coordinates relative to the canvas centre, (row - canvas/2,
/// column - canvas/2) (D_x = 2); outputs are grey values / 255 (D_y = 1). Nc ~ U{ceil(N/100) ..
/// floor(N/3)} per batch with N = canvas^2; the remaining pixels are targets (or every pixel:
/// targets_include_context), at most max_targets of them (0 = all) to keep CPU training
/// affordable.
struct ImageTaskConfig {
  std::string name = "tfmnist";
  std::filesystem::path data_dir;  ///< empty: default_fashion_mnist_dir()
  std::string train_images = "train-images-idx3-ubyte.gz";
  std::string test_images = "t10k-images-idx3-ubyte.gz";
  int64_t canvas = 56;
  int64_t train_max_translation = 14;
  int64_t test_max_translation = 14;
  double min_context_fraction = 0.01;
  double max_context_fraction = 1.0 / 3.0;
  int64_t max_targets = 0;
  /// Targets drawn from every pixel, the context's included (as in the papers' image
  /// experiments, where the model predicts the whole canvas), instead of the remaining ones.
  bool targets_include_context = false;
  /// The test file's first images form the validation split, the rest the test split.
  int64_t validation_images = 5000;

  nlohmann::json to_json() const;
  /// Missing fields keep their defaults. Throws ConfigError for wrong types or bad values.
  static ImageTaskConfig from_json(const nlohmann::json& json);
  /// Throws ConfigError when a value is out of range.
  void validate() const;
};

/// Puts image [H, W] or [H, W, C] (float) on a zero canvas [canvas, canvas(, C)] with its
/// top-left corner at ((canvas - H) / 2 + v, (canvas - W) / 2 + h). Pixels falling off the
/// canvas are dropped.
torch::Tensor place_on_canvas(const torch::Tensor& image, int64_t canvas, int64_t h, int64_t v);

/// The translated-canvas protocol that image and picture tasks share: each task's picture is
/// placed at a whole-pixel translation (h, v) ~ U{-max_translation..max_translation} per axis;
/// Nc ~ U{ceil(min_context_fraction N) .. floor(max_context_fraction N)} per batch, N = canvas^2.
struct CanvasTaskShape {
  int64_t canvas = 56;
  int64_t max_translation = 14;
  double min_context_fraction = 0.01;
  double max_context_fraction = 1.0 / 3.0;
  int64_t max_targets = 0;
  bool targets_include_context = false;
};

/// Draws batch_size tasks from `pool`, [N, H, W] or [N, H, W, C] uint8: inputs are canvas
/// pixel coordinates (canvas_coordinates) plus `tau`, outputs the pixels / 255 (D_y = C).
TaskBatch sample_canvas_tasks(const torch::Tensor& pool, const CanvasTaskShape& shape,
                              int64_t batch_size, uint64_t seed, const Translation& tau);
/// Pixel coordinates of a canvas, row-major: [canvas^2, 2] float32 of (row - canvas/2,
/// column - canvas/2).
torch::Tensor canvas_coordinates(int64_t canvas);
/// Pixel coordinates of a height x width picture, row-major: [height * width, 2] float32 of
/// (row - height/2, column - width/2), the image models' inputs (canvas_coordinates when square).
torch::Tensor pixel_coordinates(int64_t height, int64_t width);

/// Translated image-completion tasks. The dataset is read on first use (and shared by every
/// source reading the same file). Throws DataError from sample() when it cannot be read.
class ImageTaskSource final : public TaskSource {
 public:
  explicit ImageTaskSource(ImageTaskConfig config = {});

  std::string name() const override { return m_config.name; }
  int64_t dim_x() const override { return 2; }
  int64_t dim_y() const override { return 1; }
  TaskBatch sample(int64_t batch_size, uint64_t seed, const Translation& tau = {},
                   Split split = Split::Train) const override;
  nlohmann::json to_json() const override { return m_config.to_json(); }
  /// Ten pixels beyond the training window in both directions.
  Translation out_of_range_translation() const override;

  const ImageTaskConfig& config() const { return m_config; }
  /// The images of a split, [N, H, W] uint8. Throws DataError.
  torch::Tensor images(Split split) const;

 private:
  ImageTaskConfig m_config;
};

}  // namespace npe
