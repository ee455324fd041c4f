#include "npe/data/series_tasks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include <torch/torch.h>

#include "npe/data/dataset_cache.h"
#include "npe/errors.h"
#include "npe/json_fields.h"

namespace npe {
namespace {

constexpr const char* kWhat = "series task configuration";
// The window a task covers by default, in rows of the file's spacing, and the points it takes:
// 128 of 160 rows, so that windows with a few missing rows still serve, and tasks are as dense
// as gp1d's (up to 64 context points on [-2, 2]).
constexpr double kDefaultWindowRows = 160.0;
constexpr int64_t kDefaultPoints = 128;

std::string format(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    auto end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    auto item = text.substr(begin, end - begin);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
    begin = end + 1;
  }
  return out;
}

// What one read of a file depends on: the columns, and the file's size and time of change (a
// file edited while the program runs is read again).
std::string read_key(const std::filesystem::path& file, const SeriesColumns& c) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  const auto changed = std::filesystem::last_write_time(file, ec).time_since_epoch().count();
  std::string key =
      std::to_string(size) + "\n" + std::to_string(changed) + "\n" + c.x + "\n" + c.id;
  for (const auto& y : c.y) key += "\n" + y;
  return key;
}

}  // namespace

std::string to_string(SeriesSplit split) {
  return split == SeriesSplit::Tail ? "tail" : "series";
}

nlohmann::json SeriesTaskConfig::to_json() const {
  return {{"kind", "series"},
          {"name", name},
          {"data", data.string()},
          {"x", columns.x},
          {"y", columns.y},
          {"id", columns.id},
          {"window", window},
          {"num_points", num_points},
          {"min_num_context", min_num_context},
          {"max_num_context", max_num_context},
          {"split", to_string(split)},
          {"train_fraction", train_fraction},
          {"validation_fraction", validation_fraction},
          {"whole_file", whole_file},
          {"x_scale", x_scale},
          {"y_mean", y_mean},
          {"y_std", y_std},
          {"x_is_time", x_is_time}};
}

SeriesTaskConfig SeriesTaskConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError("task configuration must be a JSON object");
  SeriesTaskConfig c;
  std::string data, split = to_string(c.split);
  read_json_field(json, "name", c.name, kWhat);
  read_json_field(json, "data", data, kWhat);
  c.data = data;
  read_json_field(json, "x", c.columns.x, kWhat);
  read_json_field(json, "id", c.columns.id, kWhat);
  // y: a list, or one text of names separated by commas (--task-option y=OT,HUFL).
  if (json.contains("y") && json["y"].is_string()) {
    c.columns.y = comma_list(json["y"].get<std::string>());
  } else {
    read_json_field(json, "y", c.columns.y, kWhat);
  }
  read_json_field(json, "window", c.window, kWhat);
  read_json_field(json, "num_points", c.num_points, kWhat);
  read_json_field(json, "min_num_context", c.min_num_context, kWhat);
  read_json_field(json, "max_num_context", c.max_num_context, kWhat);
  read_json_field(json, "split", split, kWhat);
  if (split == "tail") {
    c.split = SeriesSplit::Tail;
  } else if (split == "series") {
    c.split = SeriesSplit::Series;
  } else {
    throw ConfigError(std::string(kWhat) + " field 'split': '" + split +
                      "' is neither 'tail' nor 'series'");
  }
  read_json_field(json, "train_fraction", c.train_fraction, kWhat);
  read_json_field(json, "validation_fraction", c.validation_fraction, kWhat);
  read_json_field(json, "whole_file", c.whole_file, kWhat);
  read_json_field(json, "x_scale", c.x_scale, kWhat);
  read_json_field(json, "y_mean", c.y_mean, kWhat);
  read_json_field(json, "y_std", c.y_std, kWhat);
  read_json_field(json, "x_is_time", c.x_is_time, kWhat);
  c.validate();
  return c;
}

void SeriesTaskConfig::validate() const {
  auto fail = [](const std::string& m) { throw ConfigError("series task: " + m); };
  if (!(std::isfinite(window) && window >= 0.0)) fail("window must be >= 0 (0: from the spacing)");
  if (num_points < 0) fail("num_points must be >= 0 (0: from the window)");
  if (num_points == 1) fail("num_points must be at least 2 (a context point and a target)");
  if (min_num_context < 0) fail("min_num_context must be >= 0");
  if (max_num_context < 0) fail("max_num_context must be >= 0 (0: half of num_points)");
  if (max_num_context > 0 && max_num_context < min_num_context) {
    fail("max_num_context must be >= min_num_context");
  }
  if (num_points > 0 && max_num_context >= num_points) {
    fail("max_num_context must leave at least one of num_points for a target");
  }
  if (!(train_fraction > 0.0 && validation_fraction >= 0.0 &&
        train_fraction + validation_fraction < 1.0)) {
    fail(
        "fractions must satisfy train_fraction > 0, validation_fraction >= 0 and their sum < 1 "
        "(the rest is test data)");
  }
  if (!(std::isfinite(x_scale) && x_scale >= 0.0)) fail("x_scale must be >= 0 (0: window / 4)");
  if (y_mean.size() != y_std.size()) fail("y_mean and y_std must have one value per output");
  for (size_t i = 0; i < y_std.size(); ++i) {
    if (!std::isfinite(y_mean[i]) || !(std::isfinite(y_std[i]) && y_std[i] > 0.0)) {
      fail("y_mean must be finite and y_std positive");
    }
  }
}

SeriesTaskSource::SeriesTaskSource(SeriesTaskConfig config) : m_config(std::move(config)) {
  m_config.validate();
  auto& c = m_config;
  if (c.data.empty()) {
    throw ConfigError(
        "the series task needs a file: --data FILE (CSV, TSV or whitespace, with "
        "a header)");
  }
  m_data = cached_dataset<SeriesData>(c.data, read_key(c.data, c.columns),
                                      [&] { return read_series_file(c.data, c.columns); });
  const auto& d = *m_data;
  const auto file = "'" + c.data.string() + "'";
  // The columns by name, as read: a checkpoint then says what its model takes and gives.
  c.columns.x = d.x_name;
  c.columns.y = d.y_names;
  // A trained configuration (one with statistics) read on another file: x must be of its kind.
  if (c.whole_file && !c.y_mean.empty() && c.x_is_time != d.x_is_time) {
    throw DataError(file + ": x ('" + d.x_name + "') is " +
                    (d.x_is_time ? "date-times" : "numbers") + ", the model's was " +
                    (c.x_is_time ? "date-times" : "numbers"));
  }
  c.x_is_time = d.x_is_time;
  if (!c.y_mean.empty() && static_cast<int64_t>(c.y_mean.size()) != d.dim_y()) {
    throw ConfigError(file + " has " + std::to_string(d.dim_y()) + " y columns, the model " +
                      std::to_string(c.y_mean.size()));
  }

  // Which rows each split draws from.
  const auto part = [&](int64_t n, double from, double to) {
    return std::pair<int64_t, int64_t>{static_cast<int64_t>(std::llround(n * from)),
                                       static_cast<int64_t>(std::llround(n * to))};
  };
  const double t = c.train_fraction, v = t + c.validation_fraction;
  const auto num_series = static_cast<int64_t>(d.series.size());
  for (size_t s = 0; s < d.series.size(); ++s) {
    const int64_t n = d.series[s].size();
    if (c.whole_file) {
      for (auto* w : {&m_train, &m_validation, &m_test}) w->segments.push_back({s, 0, n});
    } else if (c.split == SeriesSplit::Tail) {
      const auto [b0, e0] = part(n, 0.0, t);
      const auto [b1, e1] = part(n, t, v);
      m_train.segments.push_back({s, b0, e0});
      m_validation.segments.push_back({s, b1, e1});
      m_test.segments.push_back({s, e1, n});
    } else {
      const auto index = static_cast<int64_t>(s);
      const auto [b0, e0] = part(num_series, 0.0, t);
      const auto [b1, e1] = part(num_series, t, v);
      (void)b0;
      auto& w = index < e0 ? m_train : (index >= b1 && index < e1 ? m_validation : m_test);
      w.segments.push_back({s, 0, n});
    }
  }
  if (!c.whole_file && c.split == SeriesSplit::Series &&
      (m_train.segments.empty() || m_test.segments.empty() ||
       (c.validation_fraction > 0 && m_validation.segments.empty()))) {
    throw ConfigError(file + " has " + std::to_string(num_series) +
                      " series: too few to hold whole series out for validation and test "
                      "(split=tail holds out the end of each series)");
  }

  // The window and the points of a task.
  if (!std::isfinite(d.spacing)) {
    throw ConfigError(file +
                      ": every series has a single x value; a task needs a window of "
                      "several");
  }
  // The automatic window fits the shortest of the parts tasks are drawn from, so that a short
  // series still has validation and test windows.
  const auto longest_span = [&](const Windows& w) {
    double longest = 0.0;
    for (const auto& seg : w.segments) {
      if (seg.end - seg.begin < 2) continue;
      const auto& x = d.series[seg.series].x;
      longest = std::max(longest,
                         x[static_cast<size_t>(seg.end - 1)] - x[static_cast<size_t>(seg.begin)]);
    }
    return longest;
  };
  double fits = std::min(longest_span(m_train), longest_span(m_test));
  if (c.validation_fraction > 0.0 || c.whole_file)
    fits = std::min(fits, longest_span(m_validation));
  const auto unit = d.x_is_time ? std::string(" h") : std::string();
  if (c.window == 0.0) c.window = std::min(kDefaultWindowRows * d.spacing, fits + d.spacing);
  if (c.num_points == 0) {
    c.num_points = std::min<int64_t>(kDefaultPoints,
                                     static_cast<int64_t>(std::floor(0.8 * c.window / d.spacing)));
  }
  if (c.num_points < 2) {
    throw ConfigError(file + ": a window of " + format(c.window) + unit + " holds about " +
                      format(std::floor(c.window / d.spacing)) + " rows at the file's spacing " +
                      "of " + format(d.spacing) + unit + "; a task needs at least two points");
  }
  if (c.max_num_context == 0) c.max_num_context = c.num_points / 2;
  c.min_num_context = std::min(c.min_num_context, c.max_num_context);
  if (c.max_num_context >= c.num_points) {
    throw ConfigError("series task: max_num_context (" + std::to_string(c.max_num_context) +
                      ") must leave at least one of num_points (" + std::to_string(c.num_points) +
                      ") for a target");
  }
  if (c.x_scale == 0.0) c.x_scale = c.window / 4.0;

  // Windows: from each row of a segment, the rows within `window` after it, when they are
  // num_points at least.
  for (auto* w : {&m_train, &m_validation, &m_test}) {
    for (size_t k = 0; k < w->segments.size(); ++k) {
      const auto& seg = w->segments[k];
      const auto& x = d.series[seg.series].x;
      int64_t j = seg.begin;
      for (int64_t i = seg.begin; i < seg.end; ++i) {
        j = std::max(j, i);
        while (j < seg.end && x[static_cast<size_t>(j)] < x[static_cast<size_t>(i)] + c.window) ++j;
        if (j - i >= c.num_points) w->starts.emplace_back(static_cast<int32_t>(k), i);
      }
    }
  }
  const auto check = [&](const Windows& w, const char* which, bool needed) {
    if (!needed || !w.starts.empty()) return;
    int64_t rows = 0;
    for (const auto& seg : w.segments) rows = std::max(rows, seg.end - seg.begin);
    throw ConfigError(file + ": no window of " + format(c.window) + unit + " in the " + which +
                      " data holds " + std::to_string(c.num_points) + " points (its longest " +
                      "series part has " + std::to_string(rows) + " rows at a spacing of " +
                      format(d.spacing) + unit + "); a shorter window (window=) or fewer " +
                      "points (num_points=) would fit");
  };
  check(m_train, "training", true);
  check(m_validation, "validation", c.validation_fraction > 0.0 || c.whole_file);
  check(m_test, "test", true);

  // Outputs standardised with the training rows' statistics.
  if (c.y_mean.empty()) {
    const auto dim = static_cast<size_t>(d.dim_y());
    std::vector<double> sum(dim, 0.0), sum2(dim, 0.0);
    int64_t count = 0;
    for (const auto& seg : m_train.segments) {
      const auto& y = d.series[seg.series].y;
      for (int64_t r = seg.begin; r < seg.end; ++r) {
        for (size_t k = 0; k < dim; ++k) sum[k] += y[static_cast<size_t>(r) * dim + k];
      }
      count += seg.end - seg.begin;
    }
    for (size_t k = 0; k < dim; ++k) c.y_mean.push_back(sum[k] / static_cast<double>(count));
    for (const auto& seg : m_train.segments) {
      const auto& y = d.series[seg.series].y;
      for (int64_t r = seg.begin; r < seg.end; ++r) {
        for (size_t k = 0; k < dim; ++k) {
          const double e = y[static_cast<size_t>(r) * dim + k] - c.y_mean[k];
          sum2[k] += e * e;
        }
      }
    }
    for (size_t k = 0; k < dim; ++k) {
      const double sd = std::sqrt(sum2[k] / static_cast<double>(std::max<int64_t>(count - 1, 1)));
      // A constant column has nothing to scale: its values are moved to 0 only.
      c.y_std.push_back(sd > 0.0 && std::isfinite(sd) ? sd : 1.0);
    }
  }
}

const SeriesTaskSource::Windows& SeriesTaskSource::windows(Split split) const {
  switch (split) {
    case Split::Train:
      return m_train;
    case Split::Validation:
      return m_validation;
    case Split::Test:
      return m_test;
  }
  return m_test;
}

const std::vector<SeriesTaskSource::Segment>& SeriesTaskSource::segments(Split split) const {
  return windows(split).segments;
}

int64_t SeriesTaskSource::num_windows(Split split) const {
  return static_cast<int64_t>(windows(split).starts.size());
}

SeriesTaskSource::Window SeriesTaskSource::window(Split split, int64_t index) const {
  const auto& w = windows(split);
  if (index < 0 || index >= static_cast<int64_t>(w.starts.size())) {
    throw ConfigError("window " + std::to_string(index) + " does not exist: the split has " +
                      std::to_string(w.starts.size()) + " windows");
  }
  const auto [segment_index, first] = w.starts[static_cast<size_t>(index)];
  const auto& seg = w.segments[static_cast<size_t>(segment_index)];
  const auto& x = m_data->series[seg.series].x;
  Window window;
  window.series = seg.series;
  window.begin = first;
  window.start = x[static_cast<size_t>(first)];
  window.end =
      std::lower_bound(x.begin() + first, x.begin() + seg.end, window.start + m_config.window) -
      x.begin();
  return window;
}

Task series_task(const SeriesTaskConfig& config, const std::vector<double>& context_x,
                 const std::vector<float>& context_y, const std::vector<double>& target_x,
                 double centre) {
  const auto dim_y = static_cast<int64_t>(config.y_mean.size());
  const auto nc = static_cast<int64_t>(context_x.size());
  if (dim_y < 1 || static_cast<int64_t>(context_y.size()) != nc * dim_y) {
    throw InvalidInputError("series context: " + std::to_string(context_y.size()) +
                            " output values for " + std::to_string(nc) + " points of " +
                            std::to_string(dim_y) + " outputs");
  }
  Task task;
  task.xc = torch::empty({1, nc, 1}, torch::kFloat64);
  task.yc = torch::empty({1, nc, dim_y}, torch::kFloat32);
  task.xt = torch::empty({1, static_cast<int64_t>(target_x.size()), 1}, torch::kFloat64);
  auto* xc = task.xc.data_ptr<double>();
  auto* yc = task.yc.data_ptr<float>();
  auto* xt = task.xt.data_ptr<double>();
  for (int64_t i = 0; i < nc; ++i) {
    xc[i] = config.model_x(context_x[static_cast<size_t>(i)], centre);
    for (int64_t k = 0; k < dim_y; ++k) {
      const auto index = static_cast<size_t>(i * dim_y + k);
      yc[index] = static_cast<float>(config.model_y(context_y[index], static_cast<size_t>(k)));
    }
  }
  for (size_t i = 0; i < target_x.size(); ++i) xt[i] = config.model_x(target_x[i], centre);
  return task;
}

Prediction series_prediction_in_data_units(const SeriesTaskConfig& config,
                                           const Prediction& standardised) {
  const auto options = torch::TensorOptions().dtype(standardised.mean.scalar_type());
  const auto scale = torch::tensor(config.y_std, torch::kFloat64).to(options.dtype());
  const auto shift = torch::tensor(config.y_mean, torch::kFloat64).to(options.dtype());
  if (standardised.mean.size(-1) != scale.size(0)) {
    throw InvalidInputError("the prediction has " + std::to_string(standardised.mean.size(-1)) +
                            " outputs, the series " + std::to_string(scale.size(0)));
  }
  const auto device = standardised.mean.device();
  return {standardised.mean * scale.to(device) + shift.to(device),
          standardised.stddev * scale.to(device)};
}

double SeriesTaskSource::to_model_x(double x, double window_start) const {
  return (x - (window_start + m_config.window / 2.0)) / m_config.x_scale;
}

double SeriesTaskSource::from_model_x(double model_x, double window_start) const {
  return model_x * m_config.x_scale + window_start + m_config.window / 2.0;
}

double SeriesTaskSource::to_model_y(double y, int64_t output) const {
  const auto k = static_cast<size_t>(output);
  return (y - m_config.y_mean.at(k)) / m_config.y_std.at(k);
}

double SeriesTaskSource::from_model_y(double model_y, int64_t output) const {
  const auto k = static_cast<size_t>(output);
  return model_y * m_config.y_std.at(k) + m_config.y_mean.at(k);
}

double SeriesTaskSource::output_log_scale() const {
  double sum = 0.0;
  for (double s : m_config.y_std) sum += std::log(s);
  return sum;
}

TaskBatch SeriesTaskSource::sample(int64_t batch_size, uint64_t seed, const Translation& tau,
                                   Split split) const {
  if (batch_size < 1) throw ConfigError("batch size must be >= 1");
  if (batch_size > kMaxBatchSize) {
    throw ConfigError("batch size must be <= " + std::to_string(kMaxBatchSize));
  }
  const auto shift = translation_tensor(tau, 1);
  const auto& c = m_config;
  const auto& w = windows(split);
  if (w.starts.empty()) {
    throw ConfigError("the series task has no " +
                      std::string(split == Split::Validation ? "validation" : "test") +
                      " windows (validation_fraction is 0?)");
  }
  const auto& d = *m_data;
  const auto dim = d.dim_y();
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int64_t> nc_dist(c.min_num_context, c.max_num_context);
  const int64_t nc = nc_dist(engine);
  const int64_t nt = c.num_points - c.max_num_context;
  const int64_t n = nc + nt;
  std::uniform_int_distribution<size_t> window_dist(0, w.starts.size() - 1);
  auto x = torch::empty({batch_size, n, 1}, torch::kFloat64);
  auto y = torch::empty({batch_size, n, dim}, torch::kFloat32);
  auto* xp = x.data_ptr<double>();
  auto* yp = y.data_ptr<float>();
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batch_size; ++b) {
    const auto drawn = window(split, static_cast<int64_t>(window_dist(engine)));
    const auto& series = d.series[drawn.series];
    const double start = drawn.start;
    rows.resize(static_cast<size_t>(drawn.end - drawn.begin));
    std::iota(rows.begin(), rows.end(), drawn.begin);
    // The first n of a partial shuffle: n rows of the window at random, without repeats.
    for (int64_t i = 0; i < n; ++i) {
      std::uniform_int_distribution<size_t> pick(static_cast<size_t>(i), rows.size() - 1);
      std::swap(rows[static_cast<size_t>(i)], rows[pick(engine)]);
    }
    for (int64_t i = 0; i < n; ++i) {
      const auto r = static_cast<size_t>(rows[static_cast<size_t>(i)]);
      xp[b * n + i] = to_model_x(series.x[r], start);
      for (int64_t k = 0; k < dim; ++k) {
        yp[(b * n + i) * dim + k] = static_cast<float>(
            to_model_y(series.y[r * static_cast<size_t>(dim) + static_cast<size_t>(k)], k));
      }
    }
  }
  x = x + shift;
  using torch::indexing::Slice;
  TaskBatch batch;
  batch.task.xc = x.index({Slice(), Slice(0, nc)}).contiguous();
  batch.task.yc = y.index({Slice(), Slice(0, nc)}).contiguous();
  batch.task.xt = x.index({Slice(), Slice(nc, n)}).contiguous();
  batch.task.yt = y.index({Slice(), Slice(nc, n)}).contiguous();
  return batch;
}

std::string SeriesTaskSource::describe() const {
  const auto& c = m_config;
  const auto& d = *m_data;
  const auto unit = d.x_is_time ? std::string(" h") : std::string();
  const auto rows = [&](const Windows& w) {
    int64_t total = 0;
    for (const auto& s : w.segments) total += s.end - s.begin;
    return total;
  };
  std::string text = "'" + c.data.string() + "': " + d.describe() + ". ";
  if (c.whole_file) {
    text += "All of it is test data. ";
  } else {
    text += "Split (" + to_string(c.split) + "): " + std::to_string(rows(m_train)) +
            " training rows, " + std::to_string(rows(m_validation)) + " validation, " +
            std::to_string(rows(m_test)) + " test. ";
  }
  text += "A task: " + std::to_string(c.num_points) + " points of a window of " + format(c.window) +
          unit + ", " + std::to_string(c.min_num_context) + " to " +
          std::to_string(c.max_num_context) + " of them context (" +
          std::to_string(num_windows(Split::Train)) + " training windows).";
  return text;
}

}  // namespace npe
