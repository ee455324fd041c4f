#include "function1d/series_truth.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

#include "npe/data/date_time.h"
#include "npe/errors.h"

namespace npe::widgets {

QString DataAxes::describe_x(double x) const {
  if (x_is_time) return QString::fromStdString(format_date_time(time_origin + x * 3600.0));
  return QString::number(x, 'g', 6);
}

QString split_name(Split split) {
  switch (split) {
    case Split::Train:
      return QObject::tr("training");
    case Split::Validation:
      return QObject::tr("validation");
    case Split::Test:
      return QObject::tr("test");
  }
  return {};
}

SeriesTruth::SeriesTruth(std::shared_ptr<const SeriesTaskSource> source, Split split,
                         int64_t window)
    : m_source(std::move(source)), m_split(split), m_window(window) {
  const auto& data = m_source->data();
  if (data.dim_y() != 1) {
    throw ConfigError("the 1-D tab shows series of one output; this one has " +
                      std::to_string(data.dim_y()));
  }
  m_rows = m_source->window(split, window);
  const auto& series = data.series[m_rows.series];
  for (int64_t r = m_rows.begin; r < m_rows.end; ++r) {
    const auto i = static_cast<size_t>(r);
    m_points.emplace_back(m_source->to_model_x(series.x[i], m_rows.start),
                          m_source->to_model_y(series.y[i], 0));
  }
  const auto& config = m_source->config();
  m_axes.x_scale = config.x_scale;
  m_axes.x_offset = m_source->from_model_x(0.0, m_rows.start);
  m_axes.x_is_time = data.x_is_time;
  m_axes.time_origin = data.time_origin;
  m_axes.y_scale = config.y_std.at(0);
  m_axes.y_offset = config.y_mean.at(0);
  m_axes.x_label = data.x_is_time ? QObject::tr("%1 (UTC)").arg(QString::fromStdString(data.x_name))
                                  : QString::fromStdString(data.x_name);
  m_axes.y_label = QString::fromStdString(data.y_names.at(0));
}

std::pair<QVector<double>, QVector<double>> SeriesTruth::curve(double shift) const {
  QVector<double> x, y;
  x.reserve(static_cast<qsizetype>(m_points.size()));
  y.reserve(static_cast<qsizetype>(m_points.size()));
  for (const auto& p : m_points) {
    x.push_back(p.x() + shift);
    y.push_back(p.y());
  }
  return {std::move(x), std::move(y)};
}

std::vector<QPointF> SeriesTruth::sample_points(int n, uint64_t seed) const {
  std::vector<size_t> rows(m_points.size());
  std::iota(rows.begin(), rows.end(), size_t{0});
  std::mt19937_64 engine(seed);
  std::shuffle(rows.begin(), rows.end(), engine);
  rows.resize(std::min(rows.size(), static_cast<size_t>(std::max(n, 0))));
  std::sort(rows.begin(), rows.end());
  std::vector<QPointF> points;
  points.reserve(rows.size());
  for (const auto r : rows) points.push_back(m_points[r]);
  return points;
}

QString SeriesTruth::describe() const {
  const auto& data = m_source->data();
  const auto& series = data.series[m_rows.series];
  const auto last = series.x[static_cast<size_t>(m_rows.end - 1)];
  return QObject::tr("'%1', series %2, %3 window %4 of %5: %6 to %7 (%8 rows)")
      .arg(QString::fromStdString(data.path.filename().string()), QString::fromStdString(series.id),
           split_name(m_split))
      .arg(m_window + 1)
      .arg(m_source->num_windows(m_split))
      .arg(QString::fromStdString(data.describe_x(m_rows.start)),
           QString::fromStdString(data.describe_x(last)))
      .arg(m_rows.end - m_rows.begin);
}

std::shared_ptr<const SeriesTaskSource> series_source_of(const nlohmann::json& task,
                                                         const QString& checkpoint_path) {
  if (!task.is_object() || task.value("kind", std::string()) != "series") return nullptr;
  auto config = SeriesTaskConfig::from_json(task);
  if (config.data.is_relative() && !std::filesystem::exists(config.data)) {
    const auto beside =
        std::filesystem::path(checkpoint_path.toStdString()).parent_path() / config.data;
    if (std::filesystem::exists(beside)) config.data = beside;
  }
  return std::make_shared<const SeriesTaskSource>(std::move(config));
}

}  // namespace npe::widgets
