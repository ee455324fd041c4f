#include "function1d/data_axis_ticker.h"

#include <QTimeZone>

namespace npe::widgets {

DataAxisTicker::DataAxisTicker(double scale, double offset, bool is_time, double time_origin)
    : m_scale(scale),
      m_offset(offset),
      m_is_time(is_time),
      m_time_origin(time_origin),
      m_numbers(QSharedPointer<QCPAxisTicker>::create()),
      m_dates(QSharedPointer<QCPAxisTickerDateTime>::create()) {
  m_dates->setTimeZone(QTimeZone::utc());
}

double DataAxisTicker::toData(double plot) const {
  const double data = plot * m_scale + m_offset;
  return m_is_time ? m_time_origin + data * 3600.0 : data;
}

double DataAxisTicker::toPlot(double data) const {
  if (m_is_time) data = (data - m_time_origin) / 3600.0;
  return (data - m_offset) / m_scale;
}

void DataAxisTicker::generate(const QCPRange& range, const QLocale& locale, QChar formatChar,
                              int precision, QVector<double>& ticks, QVector<double>* subTicks,
                              QVector<QString>* tickLabels) {
  const QCPRange data(toData(range.lower), toData(range.upper));
  QCPAxisTicker* inner = m_numbers.data();
  if (m_is_time) {
    // Days when the view spans several of them, else the hour of the day under its date.
    m_dates->setDateTimeFormat(data.size() > 3 * 86400.0 ? QStringLiteral("yyyy-MM-dd")
                                                         : QStringLiteral("MM-dd\nhh:mm"));
    m_dates->setTickCount(tickCount());
    inner = m_dates.data();
  } else {
    m_numbers->setTickCount(tickCount());
  }
  inner->generate(data, locale, formatChar, precision, ticks, subTicks, tickLabels);
  for (auto& tick : ticks) tick = toPlot(tick);
  if (subTicks) {
    for (auto& tick : *subTicks) tick = toPlot(tick);
  }
}

}  // namespace npe::widgets
