#include "image/image_canvas.h"

#include <QMouseEvent>
#include <QPainter>

namespace npe::widgets {

ImageCanvas::ImageCanvas(QWidget* parent) : PixelView(parent) {
  setCursor(Qt::CrossCursor);
  setToolTip(tr("Left button: paint context pixels · right button: erase · Ctrl+Z: undo"));
}

std::vector<int> ImageCanvas::brushPixels(int row, int column) const {
  std::vector<int> pixels;
  const int side = image().width();
  const int low = -(m_brush - 1) / 2, high = m_brush / 2;
  for (int dr = low; dr <= high; ++dr) {
    for (int dc = low; dc <= high; ++dc) {
      const int r = row + dr, c = column + dc;
      if (r >= 0 && c >= 0 && r < image().height() && c < side) pixels.push_back(r * side + c);
    }
  }
  return pixels;
}

void ImageCanvas::strokeAt(const QPointF& position) {
  const auto pixel = pixelAt(position);
  if (pixel.x() < 0) return;
  Q_EMIT strokeRequested(brushPixels(pixel.x(), pixel.y()), !m_erasing, m_stroke);
}

void ImageCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton && event->button() != Qt::RightButton) return;
  m_painting = true;
  m_erasing = event->button() == Qt::RightButton;
  ++m_stroke;  // a new undo step
  strokeAt(event->position());
}

void ImageCanvas::mouseMoveEvent(QMouseEvent* event) {
  m_cursor = pixelAt(event->position());
  if (m_painting) strokeAt(event->position());
  update();
  PixelView::mouseMoveEvent(event);
}

void ImageCanvas::mouseReleaseEvent(QMouseEvent*) {
  m_painting = false;
}

void ImageCanvas::paintOverlay(QPainter& painter) {
  if (m_cursor.x() < 0 || image().isNull()) return;
  const auto rect = imageRect();
  const double cell = rect.width() / image().width();
  const int low = -(m_brush - 1) / 2;
  painter.setPen(QPen(QColor(255, 80, 80), 1));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(QRectF(rect.left() + (m_cursor.y() + low) * cell,
                          rect.top() + (m_cursor.x() + low) * cell, m_brush * cell,
                          m_brush * cell));
}

}  // namespace npe::widgets
