#include "common/pixel_view.h"

#include <cmath>

#include <QMouseEvent>
#include <QPainter>

namespace npe::widgets {

PixelView::PixelView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(84, 84);
  QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
}

void PixelView::setImage(const QImage& image) {
  m_image = image;
  update();
}

void PixelView::setHighlight(int row, int column) {
  if (m_highlight == QPoint(column, row)) return;
  m_highlight = QPoint(column, row);
  update();
}

void PixelView::setFrame(const QRect& pixels) {
  m_frame = pixels;
  update();
}

QRectF PixelView::imageRect() const {
  if (m_image.isNull()) return {};
  const double scale =
      std::min(double(width()) / m_image.width(), double(height()) / m_image.height());
  const QSizeF size(m_image.width() * scale, m_image.height() * scale);
  return {QPointF((width() - size.width()) / 2, (height() - size.height()) / 2), size};
}

QPoint PixelView::pixelAt(const QPointF& position) const {
  const auto rect = imageRect();
  if (rect.isEmpty() || !rect.contains(position)) return {-1, -1};
  const int column =
      static_cast<int>((position.x() - rect.left()) / rect.width() * m_image.width());
  const int row = static_cast<int>((position.y() - rect.top()) / rect.height() * m_image.height());
  if (column < 0 || row < 0 || column >= m_image.width() || row >= m_image.height())
    return {-1, -1};
  return {row, column};  // (row, column) packed as QPoint(x = row, y = column)
}

void PixelView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const auto rect = imageRect();
  if (rect.isEmpty()) return;
  painter.drawImage(rect, m_image);  // nearest-neighbour: no smooth-pixmap hint
  const double cell = rect.width() / m_image.width();
  if (!m_frame.isNull()) {
    painter.setPen(QPen(QColor(255, 200, 0), 1.5, Qt::DashLine));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(rect.left() + m_frame.left() * cell, rect.top() + m_frame.top() * cell,
                            m_frame.width() * cell, m_frame.height() * cell));
  }
  paintOverlay(painter);
  if (m_highlight.x() >= 0) {
    painter.setPen(QPen(QColor(0, 200, 255), 1.5));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(rect.left() + m_highlight.y() * cell,
                            rect.top() + m_highlight.x() * cell, cell, cell));
  }
}

void PixelView::mouseMoveEvent(QMouseEvent* event) {
  const auto pixel = pixelAt(event->position());
  Q_EMIT hovered(pixel.x(), pixel.y());
  QWidget::mouseMoveEvent(event);
}

void PixelView::leaveEvent(QEvent* event) {
  Q_EMIT hovered(-1, -1);
  QWidget::leaveEvent(event);
}

}  // namespace npe::widgets
