#pragma once
// Shows a small image (one cell per pixel) scaled up with square pixels, reports the pixel
// under the mouse, and can outline a pixel and a rectangle of pixels.

#include <QImage>
#include <QRect>
#include <QWidget>

namespace npe::widgets {

class PixelView : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(PixelView)

 public:
  explicit PixelView(QWidget* parent = nullptr);

  void setImage(const QImage& image);
  const QImage& image() const { return m_image; }
  /// Outlines this pixel (row, column); (-1, -1) for none.
  void setHighlight(int row, int column);
  /// Dashed outline of a rectangle of pixels (e.g. the training window); null for none.
  void setFrame(const QRect& pixels);
  /// The pixel (row, column) under a widget position, or (-1, -1) outside the image.
  QPoint pixelAt(const QPointF& position) const;
  /// Where the image is drawn inside the widget.
  QRectF imageRect() const;
  QSize sizeHint() const override { return {168, 168}; }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override { return width; }

 Q_SIGNALS:
  /// The mouse is over pixel (row, column); (-1, -1) when it left the image.
  void hovered(int row, int column);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  /// Extra drawing on top of the image (subclasses), in widget coordinates.
  virtual void paintOverlay(QPainter& painter) { (void)painter; }

 private:
  QImage m_image;
  QPoint m_highlight{-1, -1};
  QRect m_frame;
};

}  // namespace npe::widgets
