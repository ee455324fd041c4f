#pragma once
// The map tab's main view: a gridded field over latitude/longitude, drawn by VTK into an
// offscreen OpenGL framebuffer and shown as a picture in a plain QWidget, flat (2-D: coloured map
// with axes, grid lines, colour bar, coastlines) or as a surface whose height is the value (3-D,
// rotate and zoom with the mouse). VTK stays inside map_view.cpp: this header and everything that
// uses it are VTK-free.

#include <memory>
#include <vector>

#include <torch/types.h>
#include <QColor>
#include <QImage>
#include <QPointF>
#include <QRect>
#include <QWidget>

class QOffscreenSurface;
class QOpenGLContext;
class QOpenGLFramebufferObject;

namespace npe::widgets {

/// Everything the view draws, in plain Qt / libtorch types.
struct MapScene {
  torch::Tensor values;            ///< [rows, cols]; NaN cells are drawn grey
  std::vector<double> latitudes;   ///< of the rows (descending)
  std::vector<double> longitudes;  ///< of the columns (ascending)
  QString title;
  QString colour_title;          ///< colour-bar title, e.g. "°C"
  double low = 0.0, high = 1.0;  ///< colour range
  enum class Palette { Temperature, Sequential, Diverging } palette = Palette::Temperature;
  struct Station {
    int row = 0, column = 0;
    double value = 0.0;  ///< height in the 3-D view (same units as values)
  };
  std::vector<Station> stations;
  /// Proposed stations (sensor placement), numbered in the order placed, in a model's colour.
  struct Proposal {
    int row = 0, column = 0;
    int rank = 1;
    QColor colour;
    double value = 0.0;  ///< height in the 3-D view
  };
  std::vector<Proposal> proposals;
  QRect target_window;    ///< cells (x = column, y = row) the models predict; null: none
  QRect training_region;  ///< cells of the training region; null: none
  /// Coastline polylines as (longitude, latitude) points.
  std::shared_ptr<const std::vector<std::vector<QPointF>>> coastlines;

  /// Whether the two draw the same picture (values equal, NaN where the other has NaN): a
  /// prediction of a model the map does not show changes nothing, and is not drawn again.
  bool drawsTheSameAs(const MapScene& other) const;
};

class MapView final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MapView)

 public:
  explicit MapView(QWidget* parent = nullptr);
  ~MapView() override;

  /// Draws the scene on the next paint; a scene that draws the same as the current one is not
  /// rendered again (a render costs 10-15 ms under software OpenGL).
  void setScene(MapScene scene);
  const MapScene& scene() const { return m_scene; }
  void setThreeD(bool on);
  bool threeD() const { return m_three_d; }
  /// The grid cell (x = column, y = row) under a widget position in the 2-D view, or (-1, -1).
  QPoint cellAt(const QPointF& position) const;
  /// Whether the platform can host an OpenGL widget at all (not so on Qt's offscreen one).
  static bool openGLAvailable();
  /// Whether VTK could render (false: the view draws a message instead of the map); known after
  /// the first paint.
  bool renderingAvailable() const;
  /// The map as last rendered, in device pixels (null before the first paint).
  QImage renderedImage() const { return m_image; }

 Q_SIGNALS:
  /// 2-D view: the left button went down on a cell, moved to another cell while held, and was
  /// released (cells outside the grid are (-1, -1)).
  void cellPressed(QPoint cell);
  void cellDragged(QPoint cell);
  void released(QPoint cell);
  /// The mouse is over a cell (2-D view), (-1, -1) when not.
  void hovered(QPoint cell);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  void rebuild();
  void initialise();
  void render(const QSize& size);
  void renderLater();
  bool makeContextCurrent();
  struct Vtk;  // the VTK pipeline (map_view.cpp)
  std::unique_ptr<Vtk> m_vtk;
  MapScene m_scene;
  bool m_three_d = false;
  bool m_dragging = false;
  QPoint m_last_cell{-1, -1};
  // VTK renders with a context of its own on an offscreen surface, not in a QOpenGLWidget: a
  // QOpenGLWidget makes Qt compose the whole window through OpenGL on every repaint of any
  // widget, which under Mesa's software renderer cost about 20 ms a frame at 1920 x 1080, held
  // frames back to the display rate and sheared the picture at some widths.
  std::unique_ptr<QOffscreenSurface> m_surface;
  std::unique_ptr<QOpenGLContext> m_context;
  std::unique_ptr<QOpenGLFramebufferObject> m_framebuffer;
  QImage m_image;
  bool m_stale = true;  // the scene or camera changed since m_image was rendered
};

}  // namespace npe::widgets
