#include "image/colour_map.h"

#include <algorithm>
#include <cmath>

#include <QPainter>

#include <torch/torch.h>

namespace npe::widgets {
namespace {

// Magma, sampled at 9 points (dark purple to light yellow): ordered in lightness, readable in
// grey print, distinct from the grey scale used for values.
constexpr int kMagma[9][3] = {{0, 0, 4},      {28, 16, 68},    {79, 18, 123},
                              {129, 37, 129}, {181, 54, 122},  {229, 80, 100},
                              {251, 135, 97}, {254, 194, 135}, {252, 253, 191}};

}  // namespace

QColor scale_colour(ColourScale scale, double t) {
  t = std::isfinite(t) ? std::clamp(t, 0.0, 1.0) : 0.0;
  if (scale == ColourScale::Grey) {
    const int v = static_cast<int>(std::lround(255 * t));
    return QColor(v, v, v);
  }
  const double position = t * 8.0;
  const int i = std::min(7, static_cast<int>(position));
  const double f = position - i;
  auto mix = [&](int channel) {
    return static_cast<int>(std::lround((1 - f) * kMagma[i][channel] + f * kMagma[i + 1][channel]));
  };
  return QColor(mix(0), mix(1), mix(2));
}

QImage tensor_image(const torch::Tensor& values, ColourScale scale, double low, double high) {
  auto v = values.to(torch::kCPU, torch::kFloat32).contiguous();
  const int rows = static_cast<int>(v.size(0)), cols = static_cast<int>(v.size(1));
  QImage image(cols, rows, QImage::Format_RGB32);
  const auto* data = v.data_ptr<float>();
  const double span = high > low ? high - low : 1.0;
  for (int r = 0; r < rows; ++r) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
    for (int c = 0; c < cols; ++c) {
      line[c] = scale_colour(scale, (data[r * cols + c] - low) / span).rgb();
    }
  }
  return image;
}

ColourBar::ColourBar(ColourScale scale, const QString& title, QWidget* parent)
    : QWidget(parent), m_scale(scale), m_title(title) {
  setMinimumWidth(84);
  setMaximumHeight(320);
}

void ColourBar::setRange(double low, double high) {
  m_low = low;
  m_high = high;
  update();
}

void ColourBar::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const int top = 22, bottom = height() - 10, bar_width = 14;
  painter.drawText(QRect(0, 0, width(), top - 4), Qt::AlignCenter, m_title);
  for (int y = top; y <= bottom; ++y) {
    painter.setPen(scale_colour(m_scale, double(bottom - y) / std::max(1, bottom - top)));
    painter.drawLine(4, y, 4 + bar_width, y);
  }
  painter.setPen(palette().color(QPalette::WindowText));
  painter.drawRect(4, top, bar_width, bottom - top);
  for (int k = 0; k <= 4; ++k) {
    const double value = m_low + (m_high - m_low) * k / 4.0;
    const int y = bottom - (bottom - top) * k / 4;
    painter.drawLine(4 + bar_width, y, 8 + bar_width, y);
    painter.drawText(QRect(10 + bar_width, y - 8, width() - 12 - bar_width, 16),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     QString::number(value, 'f', m_high - m_low < 0.5 ? 3 : 2));
  }
}

}  // namespace npe::widgets
