#pragma once
// The editable canvas of the image tab: the translated ground truth with its context pixels,
// painted with a square brush (left button), erased with the right button.

#include <vector>

#include "common/pixel_view.h"

namespace npe::widgets {

class ImageCanvas final : public PixelView {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ImageCanvas)

 public:
  explicit ImageCanvas(QWidget* parent = nullptr);

  /// Brush side in pixels (1 = single pixels).
  void setBrushSize(int size) { m_brush = std::max(1, size); }
  int brushSize() const { return m_brush; }
  /// Pixels (row * side + column) covered by the brush centred on (row, column), clipped.
  std::vector<int> brushPixels(int row, int column) const;

 Q_SIGNALS:
  /// The user painted (on) or erased pixels of the displayed canvas; one stroke per press.
  void strokeRequested(const std::vector<int>& display_pixels, bool on, int stroke);

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void paintOverlay(QPainter& painter) override;

 private:
  void strokeAt(const QPointF& position);

  int m_brush = 1;
  int m_stroke = 0;
  bool m_painting = false;
  bool m_erasing = false;
  QPoint m_cursor{-1, -1};
};

}  // namespace npe::widgets
