#include "npe/data/picture_tasks.h"

#include <sstream>

#include <torch/torch.h>

#include "npe/data/dataset_cache.h"
#include "npe/errors.h"
#include "npe/json_fields.h"

namespace npe {
namespace {

// A picture's place in [0, 1) from its name alone (FNV-1a, then a splitmix64 finaliser), so
// that its split does not depend on the other pictures of the folder.
double name_position(const std::string& name) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace

nlohmann::json PictureTaskConfig::to_json() const {
  return {{"kind", "pictures"},
          {"name", name},
          {"data", data.string()},
          {"size", size},
          {"colour", colour},
          {"canvas", canvas},
          {"train_max_translation", train_max_translation},
          {"test_max_translation", test_max_translation},
          {"min_context_fraction", min_context_fraction},
          {"max_context_fraction", max_context_fraction},
          {"max_targets", max_targets},
          {"targets_include_context", targets_include_context},
          {"validation_fraction", validation_fraction},
          {"test_fraction", test_fraction},
          {"whole_file", whole_file}};
}

PictureTaskConfig PictureTaskConfig::from_json(const nlohmann::json& json) {
  const char* what = "pictures task configuration";
  if (!json.is_object()) throw ConfigError(std::string(what) + " must be a JSON object");
  PictureTaskConfig c;
  std::string data;
  read_json_field(json, "name", c.name, what);
  read_json_field(json, "data", data, what);
  c.data = data;
  read_json_field(json, "size", c.size, what);
  read_json_field(json, "colour", c.colour, what);
  read_json_field(json, "canvas", c.canvas, what);
  read_json_field(json, "train_max_translation", c.train_max_translation, what);
  read_json_field(json, "test_max_translation", c.test_max_translation, what);
  read_json_field(json, "min_context_fraction", c.min_context_fraction, what);
  read_json_field(json, "max_context_fraction", c.max_context_fraction, what);
  read_json_field(json, "max_targets", c.max_targets, what);
  read_json_field(json, "targets_include_context", c.targets_include_context, what);
  read_json_field(json, "validation_fraction", c.validation_fraction, what);
  read_json_field(json, "test_fraction", c.test_fraction, what);
  read_json_field(json, "whole_file", c.whole_file, what);
  c.validate();
  return c;
}

void PictureTaskConfig::validate() const {
  auto fail = [](const std::string& m) { throw ConfigError("pictures task: " + m); };
  picture_colour_from_string(colour);
  if (size < 0 || size > kLargestPictureSize) {
    fail("size must be 0 (the pictures' own) or 1.." + std::to_string(kLargestPictureSize));
  }
  if (canvas < 0 || canvas > 4096) fail("canvas must be 0 (twice the size) or 1..4096");
  if (train_max_translation < -1 || test_max_translation < -1) {
    fail("translations must be >= 0 (or -1: half the size)");
  }
  if (!(min_context_fraction >= 0.0 && max_context_fraction >= min_context_fraction &&
        max_context_fraction < 1.0)) {
    fail("context fractions must satisfy 0 <= min <= max < 1");
  }
  if (max_targets < 0) fail("max_targets must be >= 0 (0 = all remaining pixels)");
  if (!(validation_fraction >= 0.0 && test_fraction >= 0.0 &&
        validation_fraction + test_fraction < 1.0)) {
    fail("validation_fraction and test_fraction must be >= 0 with a sum below 1");
  }
}

PictureTaskSource::PictureTaskSource(PictureTaskConfig config) : m_config(std::move(config)) {
  m_config.validate();
  auto& c = m_config;
  if (c.data.empty()) {
    throw ConfigError(
        "the pictures task needs pictures: --data FOLDER (PNG or JPEG files), an IDX file or "
        "CIFAR-10's binary batches");
  }
  const auto colour = picture_colour_from_string(c.colour);
  m_data = cached_dataset<PictureCollection>(
      c.data, "pictures size=" + std::to_string(c.size) + " colour=" + to_string(colour),
      [&] { return read_picture_collection(c.data, c.size, colour); });
  const auto& d = *m_data;
  // Decided from the data, stored decided.
  c.size = d.size();
  c.colour = d.channels() == 3 ? "rgb" : "grey";
  if (c.canvas == 0) c.canvas = 2 * c.size;
  if (c.train_max_translation < 0) c.train_max_translation = c.size / 2;
  if (c.test_max_translation < 0) c.test_max_translation = c.train_max_translation;

  const bool own_test = d.has_own_test_split();
  std::vector<int64_t> train, validation, test;
  for (int64_t i = 0; i < d.count(); ++i) {
    const auto position = name_position(d.names[static_cast<size_t>(i)]);
    if (c.whole_file || d.dataset_test[static_cast<size_t>(i)]) {
      test.push_back(i);
    } else if (position < c.validation_fraction) {
      validation.push_back(i);
    } else if (position < c.validation_fraction + c.test_fraction && !own_test) {
      test.push_back(i);
    } else {
      train.push_back(i);
    }
  }
  auto take = [&](const std::vector<int64_t>& rows) {
    return rows.empty() ? torch::Tensor()
                        : d.pictures.index_select(0, torch::tensor(rows, torch::kLong));
  };
  m_indices = {train, validation, test};
  m_train = take(train);
  m_validation = take(validation);
  m_test = take(test);
}

const torch::Tensor& PictureTaskSource::pictures(Split split) const {
  switch (split) {
    case Split::Train:
      return m_train;
    case Split::Validation:
      return m_validation;
    case Split::Test:
      return m_test;
  }
  return m_train;
}

TaskBatch PictureTaskSource::sample(int64_t batch_size, uint64_t seed, const Translation& tau,
                                    Split split) const {
  const auto& pool = pictures(split);
  if (!pool.defined()) {
    const char* names[] = {"training", "validation", "test"};
    throw DataError("'" + m_config.data.string() + "': no pictures fall in the " +
                    names[static_cast<int>(split)] + " split of " +
                    std::to_string(m_data->count()) +
                    " (more pictures, or other validation_fraction / test_fraction)");
  }
  CanvasTaskShape shape;
  shape.canvas = m_config.canvas;
  shape.max_translation =
      split == Split::Test ? m_config.test_max_translation : m_config.train_max_translation;
  shape.min_context_fraction = m_config.min_context_fraction;
  shape.max_context_fraction = m_config.max_context_fraction;
  shape.max_targets = m_config.max_targets;
  shape.targets_include_context = m_config.targets_include_context;
  return sample_canvas_tasks(pool, shape, batch_size, seed, tau);
}

Translation PictureTaskSource::out_of_range_translation() const {
  const double t = static_cast<double>(m_config.train_max_translation + 10);
  return {t, t};
}

std::string PictureTaskSource::describe() const {
  auto count = [](const torch::Tensor& t) { return t.defined() ? t.size(0) : int64_t{0}; };
  std::ostringstream text;
  text << m_data->describe() << ". Split: " << count(m_train) << " training, "
       << count(m_validation) << " validation, " << count(m_test) << " test pictures"
       << (m_config.whole_file            ? " (all of them are test data)"
           : m_data->has_own_test_split() ? " (the test split is the dataset's own)"
                                          : "")
       << ". Tasks: on a " << m_config.canvas << " x " << m_config.canvas
       << " canvas, moved by up to " << m_config.train_max_translation << " pixels each way.";
  return text.str();
}

}  // namespace npe
