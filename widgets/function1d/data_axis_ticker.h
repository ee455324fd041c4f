#pragma once
// Tick marks and labels of a plot axis in the data's units while the plot itself stays in the
// model's coordinates: the visible range is mapped to the data's units, a ticker for those units
// (numbers, or UTC dates for date-times) places round values there, and they are mapped back.

#include <QSharedPointer>

#include "common/custom_plot.h"

namespace npe::widgets {

class DataAxisTicker final : public QCPAxisTicker {
 public:
  /// data = plot * scale + offset (scale > 0); for dates, data are hours since time_origin
  /// (seconds since 1970, UTC).
  DataAxisTicker(double scale, double offset, bool is_time = false, double time_origin = 0.0);

  void generate(const QCPRange& range, const QLocale& locale, QChar formatChar, int precision,
                QVector<double>& ticks, QVector<double>* subTicks,
                QVector<QString>* tickLabels) override;

 private:
  double toData(double plot) const;
  double toPlot(double data) const;

  double m_scale, m_offset;
  bool m_is_time;
  double m_time_origin;
  QSharedPointer<QCPAxisTicker> m_numbers;
  QSharedPointer<QCPAxisTickerDateTime> m_dates;
};

}  // namespace npe::widgets
