#pragma once
// The 1-D tab's truth when it shows a model's own data: one window of the series the model was
// trained on (series_tasks.h), in the model's coordinates (the window onto [-2, 2], y
// standardised by the training part's statistics), so that every model in the tab sees what the
// series model saw in training, while the axes read in the data's units (DataAxes).

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <QPointF>
#include <QString>
#include <QVector>

#include "npe/data/series_tasks.h"

namespace npe::widgets {

/// How plot coordinates read in the data's units: data x = x * x_scale + x_offset (hours for
/// date-times, shown as UTC dates from time_origin, seconds since 1970), data y = y * y_scale +
/// y_offset.
struct DataAxes {
  double x_scale = 1.0, x_offset = 0.0;
  bool x_is_time = false;
  double time_origin = 0.0;
  double y_scale = 1.0, y_offset = 0.0;
  QString x_label, y_label;

  double data_x(double x) const { return x * x_scale + x_offset; }
  double data_y(double y) const { return y * y_scale + y_offset; }
  /// A data x as the file writes it: the date-time, or the number.
  QString describe_x(double x) const;
};

class SeriesTruth {
 public:
  /// The model's task source (data read) and a window of one of its splits; throws
  /// npe::ConfigError for a window that does not exist or a series of several outputs.
  SeriesTruth(std::shared_ptr<const SeriesTaskSource> source, Split split, int64_t window);

  const SeriesTaskSource& source() const { return *m_source; }
  std::shared_ptr<const SeriesTaskSource> sharedSource() const { return m_source; }
  Split split() const { return m_split; }
  int64_t window() const { return m_window; }
  /// Every row of the window, model coordinates at Δ = 0, in x order.
  const std::vector<QPointF>& points() const { return m_points; }
  /// The series through the window's rows, moved by shift.
  std::pair<QVector<double>, QVector<double>> curve(double shift) const;
  /// n distinct rows of the window at random (n is capped at the window's rows), reproducible
  /// from seed; observations as they are, without added noise.
  std::vector<QPointF> sample_points(int n, uint64_t seed) const;
  /// The axes of this window in the data's units.
  const DataAxes& axes() const { return m_axes; }
  /// "'ETTh1.csv', series ETTh1, test window 12 of 3,412: 2017-11-03 04:00 to 2017-11-08 12:00".
  QString describe() const;

 private:
  std::shared_ptr<const SeriesTaskSource> m_source;
  Split m_split = Split::Test;
  int64_t m_window = 0;
  SeriesTaskSource::Window m_rows;
  std::vector<QPointF> m_points;
  DataAxes m_axes;
};

/// The task source of a model trained on a series (its checkpoint's task JSON), its file read;
/// null when the task is not a series. A relative data path that does not exist from the
/// working folder is looked up beside the checkpoint. Throws npe::Error when the file cannot be
/// read.
std::shared_ptr<const SeriesTaskSource> series_source_of(const nlohmann::json& task,
                                                         const QString& checkpoint_path);

QString split_name(Split split);

}  // namespace npe::widgets
