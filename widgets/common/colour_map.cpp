#include "common/colour_map.h"

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
  if (scale == ColourScale::Coolwarm) {
    // Moreland's diverging map, three anchors.
    constexpr int kCool[3][3] = {{59, 76, 192}, {221, 221, 221}, {180, 4, 38}};
    const int i = t < 0.5 ? 0 : 1;
    const double f = t < 0.5 ? 2 * t : 2 * t - 1;
    auto mix = [&](int channel) {
      return static_cast<int>(std::lround((1 - f) * kCool[i][channel] + f * kCool[i + 1][channel]));
    };
    return QColor(mix(0), mix(1), mix(2));
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
      const float value = data[r * cols + c];
      // No data (NaN): the neutral grey the map view draws such cells in.
      line[c] = std::isfinite(value) ? scale_colour(scale, (value - low) / span).rgb()
                                     : qRgb(140, 140, 140);
    }
  }
  return image;
}

ColourBar::ColourBar(ColourScale scale, const QString& title, QWidget* parent)
    : QWidget(parent), m_scale(scale), m_title(title) {
  setMinimumSize(120, 44);
  setMaximumHeight(44);
}

void ColourBar::setRange(double low, double high) {
  m_low = low;
  m_high = high;
  update();
}

void ColourBar::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const int left = 8, right = width() - 8, bar_top = 2, bar_height = 14;
  for (int x = left; x <= right; ++x) {
    painter.setPen(scale_colour(m_scale, double(x - left) / std::max(1, right - left)));
    painter.drawLine(x, bar_top, x, bar_top + bar_height);
  }
  painter.setPen(palette().color(QPalette::WindowText));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(left, bar_top, right - left, bar_height);
  const int decimals = m_high - m_low < 0.5 ? 3 : 2;
  for (int k = 0; k <= 2; ++k) {
    const double value = m_low + (m_high - m_low) * k / 2.0;
    const int x = left + (right - left) * k / 2;
    painter.drawLine(x, bar_top + bar_height, x, bar_top + bar_height + 3);
    const auto align = k == 0 ? Qt::AlignLeft : k == 2 ? Qt::AlignRight : Qt::AlignHCenter;
    QRect box(k == 0 ? x - 4 : k == 2 ? x - 60 : x - 30, bar_top + bar_height + 4, 64, 16);
    painter.drawText(box, align | Qt::AlignTop, QString::number(value, 'f', decimals));
  }
}

}  // namespace npe::widgets
