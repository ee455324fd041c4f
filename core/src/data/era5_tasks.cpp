#include "npe/data/era5_tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <random>

#include <torch/torch.h>

#include "npe/data/dataset_cache.h"
#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/shipped_files.h"

namespace npe {
namespace fs = std::filesystem;

namespace {

/// The field in kelvin: models are trained on kelvin (the checkpoint's statistics are), so a
/// file in another temperature unit is converted once as it is read (UDUNITS-2). A variable in
/// no temperature unit is refused, never taken for kelvin.
std::shared_ptr<const GriddedField> cached_field(const fs::path& path,
                                                 const std::string& variable) {
  return cached_dataset<GriddedField>(path, variable, [&] {
    auto field = read_gridded_field(path, {variable});
    const auto unit = file_temperature_unit(field);
    if (!unit.is_kelvin()) {
      field.values = field.values * unit.scale + unit.offset;
      field.units = "K";
    }
    return field;
  });
}

Era5Region region_from_string(const std::string& s) {
  if (s == "south") return Era5Region::South;
  if (s == "north") return Era5Region::North;
  throw ConfigError("ERA5 test_region must be 'south' or 'north', not '" + s + "'");
}

Era5BlockUse block_use_from_string(const std::string& s) {
  if (s == "train") return Era5BlockUse::Train;
  if (s == "validation") return Era5BlockUse::Validation;
  if (s == "test") return Era5BlockUse::Test;
  throw ConfigError("ERA5 block_pattern entries must be 'train', 'validation' or 'test', not '" +
                    s + "'");
}

Era5BlockUse use_of(Split split) {
  return split == Split::Train        ? Era5BlockUse::Train
         : split == Split::Validation ? Era5BlockUse::Validation
                                      : Era5BlockUse::Test;
}

std::shared_ptr<const PlaceFeatures> cached_features(const fs::path& invariants,
                                                     const std::vector<std::string>& names,
                                                     const GriddedField& field,
                                                     UncoveredCells uncovered) {
  std::string key = field.source.string() + "\n" + field.variable +
                    (uncovered == UncoveredCells::Missing ? "\nmissing" : "\nrefuse");
  for (const auto& n : names) key += "\n" + n;
  return cached_dataset<PlaceFeatures>(
      invariants, key, [&] { return read_place_features(invariants, names, field, uncovered); });
}

}  // namespace

TemperatureUnit file_temperature_unit(const GriddedField& field) {
  return temperature_unit(field.units,
                          field.source.string() + ": variable '" + field.variable + "'");
}

std::string to_string(Era5BlockUse use) {
  return use == Era5BlockUse::Train        ? "train"
         : use == Era5BlockUse::Validation ? "validation"
                                           : "test";
}

fs::path default_era5_path() {
  if (const char* env = std::getenv("NPE_ERA5_DATA"); env && *env) return env;
  return shipped_data_file("era5/era5-t2m-2019-03-uk.nc");
}

std::string to_string(Era5Region region) {
  return region == Era5Region::South ? "south" : "north";
}

nlohmann::json Era5TaskConfig::to_json() const {
  return {{"kind", "era5"},
          {"name", name},
          {"data", data.string()},
          {"variable", variable},
          {"window", window},
          {"time_steps", time_steps},
          {"step_hours", step_hours},
          {"min_context_fraction", min_context_fraction},
          {"max_context_fraction", max_context_fraction},
          {"max_targets", max_targets},
          {"split_latitude", split_latitude},
          {"block_days", block_days},
          {"block_pattern",
           [&] {
             auto pattern = nlohmann::json::array();
             for (auto use : block_pattern) pattern.push_back(to_string(use));
             return pattern;
           }()},
          {"test_block", test_block},
          {"train_days", train_days},
          {"validation_days", validation_days},
          {"test_region", to_string(test_region)},
          {"features", features},
          {"invariants", invariants.string()},
          {"feature_noise", feature_noise},
          {"mean", json_number_or_null(mean)},
          {"stddev", json_number_or_null(stddev)},
          {"origin_longitude", json_number_or_null(origin_longitude)},
          {"latitude_unit", json_number_or_null(latitude_unit)},
          {"longitude_unit", json_number_or_null(longitude_unit)},
          {"whole_file", whole_file}};
}

bool Era5TaskConfig::reads(const fs::path& file) const {
  const auto own = data.empty() ? default_era5_path() : data;
  std::error_code error;
  if (fs::exists(own, error) && fs::exists(file, error)) return fs::equivalent(own, file, error);
  return fs::path(own).lexically_normal() == fs::path(file).lexically_normal();
}

Era5TaskConfig Era5TaskConfig::reading(const fs::path& file, const std::string& name) const {
  auto result = *this;
  result.whole_file = !reads(file);
  result.data = file;
  result.variable = name;
  return result;
}

std::pair<double, double> Era5TaskConfig::coordinates(double latitude, double longitude) const {
  return {(latitude - split_latitude) / latitude_unit,
          (longitude - origin_longitude) / longitude_unit};
}

constexpr const char* kEra5ConfigWhat = "ERA5 task configuration";

Era5TaskConfig Era5TaskConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError("ERA5 task configuration must be a JSON object");
  Era5TaskConfig c;
  // The first protocol, for checkpoints written before these fields existed.
  c.features.clear();
  c.block_days = 0;
  std::string data, region = to_string(c.test_region), invariants;
  std::vector<std::string> pattern;
  for (auto use : c.block_pattern) pattern.push_back(to_string(use));
  read_json_field(json, "name", c.name, kEra5ConfigWhat);
  read_json_field(json, "data", data, kEra5ConfigWhat);
  c.data = data;
  read_json_field(json, "variable", c.variable, kEra5ConfigWhat);
  read_json_field(json, "window", c.window, kEra5ConfigWhat);
  read_json_field(json, "time_steps", c.time_steps, kEra5ConfigWhat);
  read_json_field(json, "step_hours", c.step_hours, kEra5ConfigWhat);
  read_json_field(json, "min_context_fraction", c.min_context_fraction, kEra5ConfigWhat);
  read_json_field(json, "max_context_fraction", c.max_context_fraction, kEra5ConfigWhat);
  read_json_field(json, "max_targets", c.max_targets, kEra5ConfigWhat);
  read_json_number_or_nan(json, "split_latitude", c.split_latitude, kEra5ConfigWhat);
  read_json_field(json, "train_days", c.train_days, kEra5ConfigWhat);
  read_json_field(json, "validation_days", c.validation_days, kEra5ConfigWhat);
  read_json_field(json, "test_region", region, kEra5ConfigWhat);
  c.test_region = region_from_string(region);
  read_json_field(json, "block_days", c.block_days, kEra5ConfigWhat);
  read_json_field(json, "block_pattern", pattern, kEra5ConfigWhat);
  c.block_pattern.clear();
  for (const auto& use : pattern) c.block_pattern.push_back(block_use_from_string(use));
  read_json_field(json, "test_block", c.test_block, kEra5ConfigWhat);
  read_json_field(json, "features", c.features, kEra5ConfigWhat);
  read_json_field(json, "invariants", invariants, kEra5ConfigWhat);
  read_json_field(json, "feature_noise", c.feature_noise, kEra5ConfigWhat);
  c.invariants = invariants;
  read_json_number_or_nan(json, "mean", c.mean, kEra5ConfigWhat);
  read_json_number_or_nan(json, "stddev", c.stddev, kEra5ConfigWhat);
  read_json_number_or_nan(json, "origin_longitude", c.origin_longitude, kEra5ConfigWhat);
  // Checkpoints from before the units were recorded were trained on the shipped 0.25° file
  // when they name no other; one that names another file keeps that file's spacing.
  if (!json.contains("latitude_unit") && c.data.empty()) c.latitude_unit = 0.25;
  if (!json.contains("longitude_unit") && c.data.empty()) c.longitude_unit = 0.25;
  read_json_number_or_nan(json, "latitude_unit", c.latitude_unit, kEra5ConfigWhat);
  read_json_number_or_nan(json, "longitude_unit", c.longitude_unit, kEra5ConfigWhat);
  read_json_field(json, "whole_file", c.whole_file, kEra5ConfigWhat);
  c.validate();
  return c;
}

void Era5TaskConfig::validate() const {
  auto fail = [](const std::string& m) { throw ConfigError("ERA5 task configuration: " + m); };
  if (window < 1 || window > 512) fail("window must be in 1..512");
  if (time_steps < 1 || time_steps > 64) fail("time_steps must be in 1..64");
  if (step_hours < 1) fail("step_hours must be >= 1");
  if (!(min_context_fraction >= 0.0 && max_context_fraction >= min_context_fraction &&
        max_context_fraction < 1.0)) {
    fail("context fractions must satisfy 0 <= min <= max < 1");
  }
  if (max_targets < 0) fail("max_targets must be >= 0 (0 = all remaining points)");
  if (std::isinf(split_latitude)) fail("split_latitude must be a number (or null: the middle)");
  if (train_days < 1 || validation_days < 0) fail("train_days >= 1 and validation_days >= 0");
  if (block_days < 0 || block_days > 366) fail("block_days must be in 0..366 (0: no blocks)");
  if (block_days > 0) {
    for (auto use : {Era5BlockUse::Train, Era5BlockUse::Validation, Era5BlockUse::Test}) {
      if (std::find(block_pattern.begin(), block_pattern.end(), use) == block_pattern.end())
        fail("block_pattern must name train, validation and test");
    }
  }
  if (test_block < -1) fail("test_block must be -1 (every test block) or a block number");
  for (size_t i = 0; i < features.size(); ++i) {
    const auto& known = known_place_features();
    if (std::find(known.begin(), known.end(), features[i]) == known.end()) {
      std::string names;
      for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
      fail("unknown feature '" + features[i] + "' (known: " + names + ")");
    }
    if (std::find(features.begin(), features.begin() + long(i), features[i]) !=
        features.begin() + long(i))
      fail("feature '" + features[i] + "' is named twice");
  }
  if (std::isfinite(stddev) && !(stddev > 0.0)) fail("stddev must be positive");
  if (!(feature_noise >= 0.0 && feature_noise <= 100.0))
    fail("feature_noise must be in 0..100 (a standard deviation in the features' units)");
  for (double unit : {latitude_unit, longitude_unit}) {
    if (!std::isnan(unit) && !(unit > 0.0 && std::isfinite(unit)))
      fail("latitude_unit and longitude_unit must be positive degrees");
  }
}

Era5TaskSource::Era5TaskSource(Era5TaskConfig config) : m_config(std::move(config)) {
  m_config.validate();
  const auto path = m_config.data.empty() ? default_era5_path() : m_config.data;
  m_field = cached_field(path, m_config.variable);
  const auto& f = *m_field;
  const auto where = path.string() + ": ";
  const bool whole = m_config.whole_file;
  const int64_t n = f.num_times();
  if (n < 1) throw DataError(where + "the file has no times");
  if (!whole && n < 2) throw DataError(where + "ERA5 tasks need at least two times");
  int64_t spacing = n > 1 ? f.valid_times[1] - f.valid_times[0] : 3600;
  bool uneven = false;
  for (size_t i = 1; i < f.valid_times.size() && !uneven; ++i) {
    if (f.valid_times[i] - f.valid_times[i - 1] == spacing) continue;
    // A whole file may be a monthly climatology (months of 28 to 31 days): windows of one time.
    if (!whole) {
      throw DataError(where + "times are not evenly spaced (a gap after " +
                      format_utc(f.valid_times[i - 1]) + ")");
    }
    uneven = true;
  }
  if (uneven) spacing = std::numeric_limits<int64_t>::max();
  m_window_time_steps = m_config.time_steps;
  if (uneven || spacing <= 0 || (m_config.step_hours * 3600) % spacing != 0) {
    // A whole file whose times are further apart than step_hours (daily data, say) gives
    // windows of one time.
    if (!whole) {
      const auto hours = spacing > 0 && spacing % 3600 == 0 ? std::to_string(spacing / 3600) : "";
      throw ConfigError("ERA5 step_hours = " + std::to_string(m_config.step_hours) +
                        " is not a multiple of the file's time spacing" +
                        (hours.empty()
                             ? std::string()
                             : " (" + hours + " h: --task-option step_hours=" + hours + ")"));
    }
    m_time_stride = 1;
    m_window_time_steps = 1;
  } else {
    m_time_stride = m_config.step_hours * 3600 / spacing;
  }
  if (whole) {
    m_window_time_steps = std::min(m_window_time_steps, (n - 1) / m_time_stride + 1);
  }
  if (!std::isfinite(m_config.origin_longitude)) {
    m_config.origin_longitude = 0.5 * (f.longitudes.front() + f.longitudes.back());
  }
  if (std::isnan(m_config.split_latitude)) {
    // Any grid (the gridded task): the southern half trains, the northern half tests. Stored
    // decided, so the checkpoint says where the split was.
    m_config.split_latitude = f.latitudes[f.latitudes.size() / 2];
  }
  if (std::isnan(m_config.latitude_unit)) {
    m_config.latitude_unit = f.num_latitudes() > 1 ? f.latitude_step() : 0.25;
  }
  if (std::isnan(m_config.longitude_unit)) {
    m_config.longitude_unit = f.num_longitudes() > 1 ? f.longitude_step() : 0.25;
  }
  // A training file must have place features everywhere; a whole file may reach beyond the
  // invariants file, and those cells are no data.
  m_features = cached_features(
      m_config.invariants.empty() ? default_era5_invariants_path() : m_config.invariants,
      m_config.features, f, whole ? UncoveredCells::Missing : UncoveredCells::Refuse);
  m_usable = torch::isfinite(f.values).any(0);
  if (m_features->count() > 0) m_usable = m_usable & torch::isfinite(m_features->values).all(-1);
  // Blocks of days, and the windows that fit inside one block of each split.
  const int64_t per_day = std::max<int64_t>(1, 86400 / spacing);
  if (whole) {
    m_blocks = {{0, n, Era5BlockUse::Test}};
  } else if (m_config.block_days == 0) {
    const int64_t train_end = std::min(n, m_config.train_days * per_day);
    const int64_t validation_end = std::min(n, train_end + m_config.validation_days * per_day);
    m_blocks = {{0, train_end, Era5BlockUse::Train},
                {train_end, validation_end, Era5BlockUse::Validation},
                {validation_end, n, Era5BlockUse::Test}};
  } else {
    const int64_t length = m_config.block_days * per_day;
    for (int64_t begin = 0, k = 0; begin < n; begin += length, ++k) {
      const auto use = m_config.block_pattern[size_t(k) % m_config.block_pattern.size()];
      m_blocks.push_back({begin, std::min(n, begin + length), use});
    }
  }
  const int64_t span = (m_window_time_steps - 1) * m_time_stride;
  int64_t test_blocks = 0;
  for (const auto& block : m_blocks) {
    if (block.use == Era5BlockUse::Test && m_config.test_block >= 0 &&
        test_blocks++ != m_config.test_block)
      continue;
    for (int64_t t = block.time_begin; t + span < block.time_end; ++t) {
      // A whole file has no training days: every split draws from all of it.
      if (whole) {
        for (auto& starts : m_starts) starts.push_back(t);
      } else {
        m_starts[static_cast<int>(block.use)].push_back(t);
      }
    }
  }
  if (m_config.test_block >= 0 && m_config.test_block >= test_blocks) {
    throw ConfigError(where + "test_block " + std::to_string(m_config.test_block) +
                      " does not exist (the file has " + std::to_string(test_blocks) +
                      " test blocks)");
  }
  if (whole && (f.num_latitudes() < m_config.window || f.num_longitudes() < m_config.window)) {
    throw ConfigError(where + "the grid (" + std::to_string(f.num_latitudes()) + " x " +
                      std::to_string(f.num_longitudes()) + " cells) is smaller than one " +
                      std::to_string(m_config.window) + " x " + std::to_string(m_config.window) +
                      " task window");
  }
  if (whole && !m_usable.any().item<bool>()) {
    throw DataError(where + "no cell has both a value and place features");
  }
  // Every split must fit at least one window.
  for (auto split : {Split::Train, Split::Validation, Split::Test}) {
    const auto e = extent(split);
    if (e.row_end - e.row_begin < m_config.window || e.col_end - e.col_begin < m_config.window ||
        window_starts(split).empty()) {
      throw ConfigError(where + "the " +
                        std::string(split == Split::Train        ? "training"
                                    : split == Split::Validation ? "validation"
                                                                 : "test") +
                        " split is smaller than one " + std::to_string(m_config.window) + " x " +
                        std::to_string(m_config.window) + " x " +
                        std::to_string(m_window_time_steps) + " task window");
    }
  }
  if (!std::isfinite(m_config.mean) || !std::isfinite(m_config.stddev)) {
    // Statistics of the training region and days only (as the paper standardises); of the
    // whole file when it has no training split.
    const auto e = extent(Split::Train);
    using torch::indexing::Slice;
    std::vector<torch::Tensor> parts;
    for (const auto& block : m_blocks) {
      if (!whole && block.use != Era5BlockUse::Train) continue;
      parts.push_back(f.values
                          .index({Slice(block.time_begin, block.time_end),
                                  Slice(e.row_begin, e.row_end), Slice(e.col_begin, e.col_end)})
                          .reshape({-1}));
    }
    auto train = torch::cat(parts).to(torch::kFloat64);
    auto finite = train.masked_select(torch::isfinite(train));
    if (finite.numel() < 2) throw DataError(where + "the training region has no values");
    m_config.mean = finite.mean().item<double>();
    m_config.stddev = finite.std().item<double>();
    if (!(m_config.stddev > 0.0)) throw DataError(where + "the training values are constant");
  }
}

Era5Extent Era5TaskSource::region_extent(Era5Region region) const {
  const auto& lat = m_field->latitudes;  // descending
  Era5Extent e;
  if (m_config.whole_file) return {0, m_field->num_latitudes(), 0, m_field->num_longitudes()};
  const double tolerance = 1e-6;
  const auto n = static_cast<int64_t>(lat.size());
  if (region == Era5Region::North) {
    e.row_begin = 0;
    e.row_end = 0;
    while (e.row_end < n && lat[e.row_end] > m_config.split_latitude + tolerance) ++e.row_end;
  } else {
    e.row_begin = 0;
    while (e.row_begin < n && lat[e.row_begin] >= m_config.split_latitude - tolerance)
      ++e.row_begin;
    e.row_end = n;
  }
  e.col_begin = 0;
  e.col_end = m_field->num_longitudes();
  return e;
}

Era5Region Era5TaskSource::region_of(Split split) const {
  return split == Split::Test ? m_config.test_region : Era5Region::South;
}

Era5Extent Era5TaskSource::extent(Split split) const {
  return region_extent(region_of(split));
}

const Era5DayBlock* Era5TaskSource::block_at(int64_t time) const {
  for (const auto& block : m_blocks)
    if (time >= block.time_begin && time < block.time_end) return &block;
  return nullptr;
}

std::string Era5TaskSource::describe() const {
  const auto& f = *m_field;
  const auto& c = m_config;
  const auto number = [](double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", value);
    return std::string(text);
  };
  const auto latitude = [&](double value) {
    return number(std::abs(value)) + (value < 0 ? "° S" : "° N");
  };
  const auto longitude = [&](double value) {
    return number(std::abs(value)) + (value < 0 ? "° W" : "° E");
  };
  std::string text = "'" + f.source.filename().string() + "': " + f.variable;
  if (!f.long_name.empty()) text += " (" + f.long_name + ")";
  if (!f.units.empty()) text += " in " + f.units;
  text += ", " + std::to_string(f.num_times()) + " times";
  if (!f.valid_times.empty()) {
    text +=
        " from " + format_utc(f.valid_times.front()) + " to " + format_utc(f.valid_times.back());
  }
  text += "; a grid of " + std::to_string(f.num_latitudes()) + " × " +
          std::to_string(f.num_longitudes()) + " cells";
  if (f.num_latitudes() > 1 && f.num_longitudes() > 1) {
    text += " of " + number(f.latitude_step()) + "° × " + number(f.longitude_step()) + "°";
  }
  text += ", " + latitude(f.latitudes.back()) + " to " + latitude(f.latitudes.front()) + ", " +
          longitude(f.longitudes.front()) + " to " + longitude(f.longitudes.back()) + ". ";
  const auto windows = [&](Split split) { return std::to_string(window_starts(split).size()); };
  if (c.whole_file) {
    text += "All of it is test data (" + windows(Split::Test) + " windows). ";
  } else {
    text += "Training and validation: the rows south of " + latitude(c.split_latitude) + " (" +
            windows(Split::Train) + " and " + windows(Split::Validation) + " windows); test: " +
            (c.test_region == Era5Region::North ? "the rows north of it" : "the same rows") + " (" +
            windows(Split::Test) + " windows). ";
  }
  text += "A task: " + std::to_string(c.window) + " × " + std::to_string(c.window) + " cells at " +
          std::to_string(c.time_steps) + " times " + std::to_string(c.step_hours) +
          " h apart; values standardised by the training region's mean " + number(c.mean) +
          " K and standard deviation " + number(c.stddev) + " K.";
  return text;
}

const std::vector<int64_t>& Era5TaskSource::window_starts(Split split) const {
  return m_starts[static_cast<int>(use_of(split))];
}

torch::Tensor Era5TaskSource::inputs(const torch::Tensor& rows, const torch::Tensor& cols,
                                     const torch::Tensor& steps) const {
  const auto& f = *m_field;
  const double dlat = f.num_latitudes() > 1 ? f.latitude_step() : 0.0;
  const double dlon = f.num_longitudes() > 1 ? f.longitude_step() : 0.0;
  // Row r has latitude lat[0] - r * dlat: units (the training grid's spacing) north of the
  // origin, so distances are physical whatever this file's resolution.
  const auto [row0, col0] = m_config.coordinates(f.latitudes.front(), f.longitudes.front());
  auto x0 = row0 - rows.to(torch::kFloat64) * (dlat / m_config.latitude_unit);
  auto x1 = col0 + cols.to(torch::kFloat64) * (dlon / m_config.longitude_unit);
  auto x2 = steps.to(torch::kFloat64);
  auto x = torch::stack({x0, x1, x2}, -1);
  if (m_features->count() > 0) {
    x = torch::cat({x, m_features->values.index({rows, cols})}, -1);
  }
  return x.to(torch::kFloat32);
}

torch::Tensor Era5TaskSource::standardise(const torch::Tensor& values) const {
  return (values - m_config.mean) / m_config.stddev;
}

torch::Tensor Era5TaskSource::unstandardise(const torch::Tensor& outputs) const {
  return outputs * m_config.stddev + m_config.mean;
}

TaskBatch Era5TaskSource::sample(int64_t batch_size, uint64_t seed, const Translation& tau,
                                 Split split) const {
  if (batch_size < 1) throw ConfigError("batch size must be >= 1");
  // A translation moves the three coordinates; the place features stay with their cells.
  Translation coordinates = tau;
  if (m_features->count() > 0 && tau.size() == static_cast<size_t>(dim_x())) {
    if (std::any_of(tau.begin() + 3, tau.end(), [](double v) { return v != 0.0; }))
      throw ConfigError("ERA5 tasks: place features cannot be translated (their components of " +
                        describe_translation(tau) + " must be 0)");
    coordinates.resize(3);
  }
  auto shift = torch::zeros({dim_x()}, torch::kFloat32);
  shift.narrow(0, 0, 3).copy_(translation_tensor(coordinates, 3));
  const auto e = extent(split);
  const int64_t w = m_config.window, steps = m_window_time_steps;
  const int64_t n = w * w * steps;
  std::mt19937_64 engine(seed);
  if (m_config.whole_file) return sample_whole_file(batch_size, engine, e, shift);
  const auto nc_low = static_cast<int64_t>(std::ceil(m_config.min_context_fraction * n));
  const auto nc_high = std::max(nc_low, static_cast<int64_t>(m_config.max_context_fraction * n));
  const int64_t nc = std::uniform_int_distribution<int64_t>(nc_low, nc_high)(engine);
  const int64_t remaining = n - nc;
  const int64_t nt =
      m_config.max_targets > 0 ? std::min(remaining, m_config.max_targets) : remaining;
  std::uniform_int_distribution<int64_t> pick_row(e.row_begin, e.row_end - w);
  std::uniform_int_distribution<int64_t> pick_col(e.col_begin, e.col_end - w);
  const auto& starts = window_starts(split);
  std::uniform_int_distribution<size_t> pick_time(0, starts.size() - 1);
  // Window-relative cell and step of every point, in a fixed order.
  auto local = torch::arange(n, torch::kLong);
  auto step_of = local.div(w * w, "floor"), rest = local.remainder(w * w);
  auto row_of = rest.div(w, "floor"), col_of = rest.remainder(w);
  const auto& values = m_field->values;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<torch::Tensor> xc, yc, xt, yt;
  std::mt19937_64 noise_engine(seed ^ 0x9E3779B97F4A7C15ull);
  for (int64_t b = 0; b < batch_size; ++b) {
    torch::Tensor y;
    int64_t r0 = 0, c0 = 0;
    // Windows with missing values are redrawn (the shipped data has none).
    for (int attempt = 0;; ++attempt) {
      r0 = pick_row(engine), c0 = pick_col(engine);
      const int64_t t0 = starts[pick_time(engine)];
      auto rows = row_of + r0, cols = col_of + c0, times = step_of * m_time_stride + t0;
      y = values.index({times, rows, cols}).reshape({n, 1});
      if (torch::isfinite(y).all().item<bool>()) break;
      if (attempt == 100) {
        throw DataError(m_field->source.string() +
                        ": no window without missing values found in 100 draws");
      }
    }
    auto x = inputs(row_of + r0, col_of + c0, step_of);
    if (split == Split::Train && m_config.feature_noise > 0.0 && m_features->count() > 0) {
      // Its own generator, so that the windows and points drawn are those of the exact tasks.
      std::normal_distribution<float> noise(0.0f, static_cast<float>(m_config.feature_noise));
      auto features = x.narrow(1, 3, m_features->count());
      auto drawn = torch::empty(features.sizes(), features.options());
      for (float *v = drawn.data_ptr<float>(), *end = v + drawn.numel(); v != end; ++v)
        *v = noise(noise_engine);
      features.add_(drawn);
    }
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), engine);
    auto perm = torch::tensor(order, torch::kLong);
    auto ctx = perm.slice(0, 0, nc), tgt = perm.slice(0, nc, nc + nt);
    auto ys = standardise(y.to(torch::kFloat64)).to(torch::kFloat32);
    xc.push_back(x.index_select(0, ctx));
    yc.push_back(ys.index_select(0, ctx));
    xt.push_back(x.index_select(0, tgt));
    yt.push_back(ys.index_select(0, tgt));
  }
  TaskBatch batch;
  batch.task = {torch::stack(xc) + shift, torch::stack(yc), torch::stack(xt) + shift,
                torch::stack(yt)};
  return batch;
}

TaskBatch Era5TaskSource::sample_whole_file(int64_t batch_size, std::mt19937_64& engine,
                                            const Era5Extent& e, const torch::Tensor& shift) const {
  // Windows may hold cells without values (land-only or sea-only data) or without place
  // features: only the usable points of a window are context or targets. Tasks of a batch
  // need equal sizes, so every window takes as many points as the sparsest one has, and a
  // window is redrawn while fewer than a quarter of its points are usable.
  const int64_t w = m_config.window, steps = m_window_time_steps, n = w * w * steps;
  auto local = torch::arange(n, torch::kLong);
  auto step_of = local.div(w * w, "floor"), rest = local.remainder(w * w);
  auto row_of = rest.div(w, "floor"), col_of = rest.remainder(w);
  std::uniform_int_distribution<int64_t> pick_row(e.row_begin, e.row_end - w);
  std::uniform_int_distribution<int64_t> pick_col(e.col_begin, e.col_end - w);
  const auto& starts = window_starts(Split::Test);
  std::uniform_int_distribution<size_t> pick_time(0, starts.size() - 1);
  struct Window {
    torch::Tensor x, y, usable_points;  // [n, dim_x], [n, 1], indices of usable points
  };
  std::vector<Window> windows;
  int64_t fewest = n;
  for (int64_t b = 0; b < batch_size; ++b) {
    Window best;
    for (int attempt = 0; attempt < 100; ++attempt) {
      const int64_t r0 = pick_row(engine), c0 = pick_col(engine), t0 = starts[pick_time(engine)];
      auto rows = row_of + r0, cols = col_of + c0;
      auto y = m_field->values.index({step_of * m_time_stride + t0, rows, cols}).reshape({n, 1});
      auto ok = torch::isfinite(y.squeeze(1)) & m_usable.index({rows, cols});
      auto usable = ok.nonzero().squeeze(1);
      if (!best.y.defined() || usable.numel() > best.usable_points.numel()) {
        best = {inputs(rows, cols, step_of), y, usable};
      }
      if (usable.numel() * 4 >= n) break;
    }
    if (best.usable_points.numel() < 2) {
      throw DataError(m_field->source.string() +
                      ": no task window with two or more values found in 100 draws");
    }
    fewest = std::min(fewest, best.usable_points.numel());
    windows.push_back(std::move(best));
  }
  const auto nc_low =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(m_config.min_context_fraction * fewest)));
  const auto nc_high = std::min(
      fewest - 1, std::max(nc_low, static_cast<int64_t>(m_config.max_context_fraction * fewest)));
  const int64_t nc =
      std::uniform_int_distribution<int64_t>(std::min(nc_low, nc_high), nc_high)(engine);
  const int64_t nt =
      m_config.max_targets > 0 ? std::min(fewest - nc, m_config.max_targets) : fewest - nc;
  std::vector<torch::Tensor> xc, yc, xt, yt;
  for (const auto& window : windows) {
    std::vector<int64_t> order(static_cast<size_t>(window.usable_points.numel()));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), engine);
    auto picked = window.usable_points.index_select(0, torch::tensor(order, torch::kLong));
    auto ctx = picked.slice(0, 0, nc), tgt = picked.slice(0, nc, nc + nt);
    auto ys = standardise(window.y.to(torch::kFloat64)).to(torch::kFloat32);
    xc.push_back(window.x.index_select(0, ctx));
    yc.push_back(ys.index_select(0, ctx));
    xt.push_back(window.x.index_select(0, tgt));
    yt.push_back(ys.index_select(0, tgt));
  }
  TaskBatch batch;
  batch.task = {torch::stack(xc) + shift, torch::stack(yc), torch::stack(xt) + shift,
                torch::stack(yt)};
  return batch;
}

Translation Era5TaskSource::out_of_range_translation() const {
  const auto south = region_extent(Era5Region::South), north = region_extent(Era5Region::North);
  Translation tau(static_cast<size_t>(dim_x()), 0.0);
  tau[0] = static_cast<double>(south.row_begin - north.row_begin);
  return tau;
}

std::vector<TaskSource::Variant> Era5TaskSource::evaluation_variants() const {
  const auto& times = m_field->valid_times;
  auto day = [&](int64_t time) { return format_utc(times[size_t(time)]).substr(0, 10); };
  if (m_config.whole_file) {
    const auto& f = *m_field;
    return {{"the whole file (" + std::to_string(f.num_latitudes()) + " x " +
                 std::to_string(f.num_longitudes()) + " cells, " + day(0) +
                 (f.num_times() > 1 ? " to " + day(f.num_times() - 1) : "") + ")",
             nlohmann::json::object(), "whole file"}};
  }
  if (m_config.block_days == 0) {
    const auto& test = m_blocks.back();
    const auto days = "days " + std::to_string(m_config.train_days + m_config.validation_days + 1) +
                      "+ (" + day(test.time_begin) + " on)";
    return {{"training region (south), " + days, {{"test_region", "south"}}, "south"},
            {"test region (north), " + days, {{"test_region", "north"}}, "north"}};
  }
  // One variant per region and test block: the blocks are the independent units (a weather
  // regime lasts days), so results are reported per block and summarised over blocks.
  std::vector<Variant> variants;
  for (auto region : {Era5Region::South, Era5Region::North}) {
    int64_t k = 0;
    for (const auto& block : m_blocks) {
      if (block.use != Era5BlockUse::Test) continue;
      const auto name =
          region == Era5Region::South ? "training region (south)" : "unseen region (north)";
      variants.push_back({std::string(name) + ", test block " + std::to_string(k) + " (" +
                              day(block.time_begin) + " to " + day(block.time_end - 1) + ")",
                          {{"test_region", to_string(region)}, {"test_block", k}},
                          to_string(region)});
      ++k;
    }
  }
  return variants;
}

}  // namespace npe
