#include "npe/data/image_tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>
#include <random>

#include <torch/torch.h>

#include "npe/data/dataset_cache.h"
#include "npe/errors.h"
#include "npe/json_fields.h"

namespace npe {
namespace fs = std::filesystem;

namespace {

torch::Tensor cached_images(const fs::path& path) {
  return *cached_dataset<torch::Tensor>(path, "images",
                                        [&path] { return read_mnist(path).images; });
}

}  // namespace

fs::path default_fashion_mnist_dir() {
  if (const char* env = std::getenv("NPE_FASHION_MNIST_DIR"); env && *env) return env;
  return "/usr/share/datasets/fashion-mnist";
}

nlohmann::json ImageTaskConfig::to_json() const {
  return {{"kind", "image"},
          {"name", name},
          {"data_dir", data_dir.string()},
          {"train_images", train_images},
          {"test_images", test_images},
          {"canvas", canvas},
          {"train_max_translation", train_max_translation},
          {"test_max_translation", test_max_translation},
          {"min_context_fraction", min_context_fraction},
          {"max_context_fraction", max_context_fraction},
          {"max_targets", max_targets},
          {"targets_include_context", targets_include_context},
          {"validation_images", validation_images}};
}

ImageTaskConfig ImageTaskConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError("image task configuration must be a JSON object");
  ImageTaskConfig c;
  std::string dir;
  read_json_field(json, "name", c.name, "image task configuration");
  read_json_field(json, "data_dir", dir, "image task configuration");
  c.data_dir = dir;
  read_json_field(json, "train_images", c.train_images, "image task configuration");
  read_json_field(json, "test_images", c.test_images, "image task configuration");
  read_json_field(json, "canvas", c.canvas, "image task configuration");
  read_json_field(json, "train_max_translation", c.train_max_translation,
                  "image task configuration");
  read_json_field(json, "test_max_translation", c.test_max_translation, "image task configuration");
  read_json_field(json, "min_context_fraction", c.min_context_fraction, "image task configuration");
  read_json_field(json, "max_context_fraction", c.max_context_fraction, "image task configuration");
  read_json_field(json, "max_targets", c.max_targets, "image task configuration");
  read_json_field(json, "targets_include_context", c.targets_include_context,
                  "image task configuration");
  read_json_field(json, "validation_images", c.validation_images, "image task configuration");
  c.validate();
  return c;
}

void ImageTaskConfig::validate() const {
  auto fail = [](const std::string& m) { throw ConfigError("image task configuration: " + m); };
  if (canvas < 1 || canvas > 4096) fail("canvas must be in 1..4096");
  if (train_max_translation < 0 || test_max_translation < 0) fail("translations must be >= 0");
  if (!(min_context_fraction >= 0.0 && max_context_fraction >= min_context_fraction &&
        max_context_fraction < 1.0)) {
    fail("context fractions must satisfy 0 <= min <= max < 1");
  }
  if (max_targets < 0) fail("max_targets must be >= 0 (0 = all remaining pixels)");
  if (validation_images < 0) fail("validation_images must be >= 0");
}

torch::Tensor place_on_canvas(const torch::Tensor& image, int64_t canvas, int64_t h, int64_t v) {
  if (image.dim() != 2 && image.dim() != 3) {
    throw InvalidInputError("place_on_canvas expects an image [H, W] or [H, W, C]");
  }
  auto canvas_shape = image.sizes().vec();
  canvas_shape[0] = canvas_shape[1] = canvas;
  auto out = torch::zeros(canvas_shape, image.options());
  const int64_t top = (canvas - image.size(0)) / 2 + v;
  const int64_t left = (canvas - image.size(1)) / 2 + h;
  // Intersection of the placed image with the canvas.
  const int64_t r0 = std::max<int64_t>(0, top), r1 = std::min(canvas, top + image.size(0));
  const int64_t c0 = std::max<int64_t>(0, left), c1 = std::min(canvas, left + image.size(1));
  if (r1 <= r0 || c1 <= c0) return out;
  using torch::indexing::Slice;
  out.index_put_({Slice(r0, r1), Slice(c0, c1)},
                 image.index({Slice(r0 - top, r1 - top), Slice(c0 - left, c1 - left)}));
  return out;
}

torch::Tensor canvas_coordinates(int64_t canvas) {
  return pixel_coordinates(canvas, canvas);
}

torch::Tensor pixel_coordinates(int64_t height, int64_t width) {
  // Centres are pixel indices (side / 2), also for odd sides.
  auto r = torch::arange(height, torch::kFloat32) - static_cast<float>(height / 2);
  auto c = torch::arange(width, torch::kFloat32) - static_cast<float>(width / 2);
  auto grid = torch::meshgrid({r, c}, "ij");
  return torch::stack({grid[0].reshape({-1}), grid[1].reshape({-1})}, -1);
}

ImageTaskSource::ImageTaskSource(ImageTaskConfig config) : m_config(std::move(config)) {
  m_config.validate();
}

torch::Tensor ImageTaskSource::images(Split split) const {
  const auto dir = m_config.data_dir.empty() ? default_fashion_mnist_dir() : m_config.data_dir;
  if (split == Split::Train) return cached_images(dir / m_config.train_images);
  auto all = cached_images(dir / m_config.test_images);
  const auto n_val = std::min(m_config.validation_images, all.size(0) - 1);
  using torch::indexing::Slice;
  if (n_val <= 0) return all;
  return split == Split::Validation ? all.index({Slice(0, n_val)})
                                    : all.index({Slice(n_val, torch::indexing::None)});
}

TaskBatch sample_canvas_tasks(const torch::Tensor& pool, const CanvasTaskShape& shape,
                              int64_t batch_size, uint64_t seed, const Translation& tau) {
  if (batch_size < 1) throw ConfigError("batch size must be >= 1");
  if (!pool.defined() || pool.size(0) < 1) throw DataError("no pictures to draw tasks from");
  const auto shift = translation_tensor(tau, 2).to(torch::kFloat32);
  const int64_t canvas = shape.canvas;
  const int64_t n = canvas * canvas;
  const int64_t channels = pool.dim() == 4 ? pool.size(3) : 1;
  const int64_t max_t = shape.max_translation;
  std::mt19937_64 engine(seed);
  const auto nc_low = static_cast<int64_t>(std::ceil(shape.min_context_fraction * n));
  const auto nc_high = std::max(nc_low, static_cast<int64_t>(shape.max_context_fraction * n));
  const int64_t nc = std::uniform_int_distribution<int64_t>(nc_low, nc_high)(engine);
  const int64_t remaining = shape.targets_include_context ? n : n - nc;
  const int64_t nt = shape.max_targets > 0 ? std::min(remaining, shape.max_targets) : remaining;
  std::uniform_int_distribution<int64_t> pick(0, pool.size(0) - 1);
  std::uniform_int_distribution<int64_t> translation(-max_t, max_t);
  const auto coordinates = canvas_coordinates(canvas);
  std::vector<int64_t> order(n);
  std::vector<torch::Tensor> xc, yc, xt, yt;
  for (int64_t b = 0; b < batch_size; ++b) {
    const auto index = pick(engine);
    const auto h = translation(engine), v = translation(engine);
    auto image = pool[index].to(torch::kFloat32) / 255.0;
    auto values = place_on_canvas(image, canvas, h, v).reshape({n, channels});
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), engine);
    auto perm = torch::tensor(order, torch::kLong);
    const int64_t first_target = shape.targets_include_context ? 0 : nc;
    auto ctx = perm.slice(0, 0, nc), tgt = perm.slice(0, first_target, first_target + nt);
    xc.push_back(coordinates.index_select(0, ctx));
    yc.push_back(values.index_select(0, ctx));
    xt.push_back(coordinates.index_select(0, tgt));
    yt.push_back(values.index_select(0, tgt));
  }
  TaskBatch batch;
  // Translations are applied after every draw, so translated tasks are paired with untranslated.
  batch.task = {torch::stack(xc) + shift, torch::stack(yc), torch::stack(xt) + shift,
                torch::stack(yt)};
  return batch;
}

TaskBatch ImageTaskSource::sample(int64_t batch_size, uint64_t seed, const Translation& tau,
                                  Split split) const {
  if (batch_size < 1) throw ConfigError("batch size must be >= 1");
  CanvasTaskShape shape;
  shape.canvas = m_config.canvas;
  shape.max_translation =
      split == Split::Test ? m_config.test_max_translation : m_config.train_max_translation;
  shape.min_context_fraction = m_config.min_context_fraction;
  shape.max_context_fraction = m_config.max_context_fraction;
  shape.max_targets = m_config.max_targets;
  shape.targets_include_context = m_config.targets_include_context;
  return sample_canvas_tasks(images(split), shape, batch_size, seed, tau);
}

Translation ImageTaskSource::out_of_range_translation() const {
  const double t = static_cast<double>(m_config.train_max_translation + 10);
  return {t, t};
}

}  // namespace npe
