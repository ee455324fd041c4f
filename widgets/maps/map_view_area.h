#pragma once
// The map tab's big-map pane: the VTK map view, made only when first needed, and the hover
// line under it.
//
// The view is made when the pane is first shown (or asked for), so a session that never opens
// the maps tab creates no OpenGL context. Platforms without OpenGL (Qt's offscreen platform)
// cannot host the view at all: the pane then says why, and the tab works with its small maps.

#include <QWidget>

class QLabel;

namespace npe::widgets {

class MapView;

class MapViewArea final : public QWidget {
  Q_OBJECT

 public:
  explicit MapViewArea(QWidget* parent = nullptr);

  /// The view, made now if it was not yet; null where the platform has no OpenGL.
  MapView* view();
  /// The view if it has been made, else null (never makes it).
  MapView* existingView() const { return m_view; }
  void setHoverText(const QString& text);

 Q_SIGNALS:
  /// The view was just made: attach editors to it, set its mode and give it a scene.
  void viewCreated(MapView* view);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  MapView* m_view = nullptr;
  QWidget* m_placeholder = nullptr;  ///< holds the view's place and size until it is made
  QLabel* m_hover = nullptr;
};

}  // namespace npe::widgets
