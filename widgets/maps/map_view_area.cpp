#include "maps/map_view_area.h"

#include <QLabel>
#include <QVBoxLayout>

#include "maps/map_view.h"

namespace npe::widgets {
namespace {

// The big map's least size: with the small maps and metrics column beside it, the tab fits a
// 1400 x 860 window (--screenshot).
const QSize kViewMinimumSize(480, 400);

}  // namespace

MapViewArea::MapViewArea(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  if (MapView::openGLAvailable()) {
    m_placeholder = new QWidget(this);
    m_placeholder->setMinimumSize(kViewMinimumSize);
    layout->addWidget(m_placeholder, 1);
  } else {
    auto* missing = new QLabel(tr("The 2-D/3-D map view needs OpenGL, which this display "
                                  "platform does not offer; the small maps below still work."),
                               this);
    missing->setWordWrap(true);
    layout->addWidget(missing);
  }
  m_hover = new QLabel(tr("Click the map inside the black square to add a station; click a "
                          "station to remove it, drag it to move it."),
                       this);
  m_hover->setWordWrap(true);
  m_hover->setMinimumHeight(40);
  layout->addWidget(m_hover);
}

MapView* MapViewArea::view() {
  if (m_view || !m_placeholder) return m_view;
  m_view = new MapView(this);
  m_view->setMinimumSize(kViewMinimumSize);
  // The layout hands back the placeholder's item, which the caller owns (LeakSanitizer).
  delete layout()->replaceWidget(m_placeholder, m_view);
  delete m_placeholder;
  m_placeholder = nullptr;
  Q_EMIT viewCreated(m_view);
  return m_view;
}

void MapViewArea::setHoverText(const QString& text) {
  m_hover->setText(text);
}

void MapViewArea::showEvent(QShowEvent* event) {
  view();
  QWidget::showEvent(event);
}

}  // namespace npe::widgets
