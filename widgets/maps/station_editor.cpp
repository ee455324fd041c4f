#include "maps/station_editor.h"

#include <algorithm>
#include <random>

#include <QUndoStack>

#include "maps/map_view.h"
#include "maps/station_set.h"

namespace npe::widgets {

StationEditor::StationEditor(StationSet* stations, QUndoStack* undo, std::function<QRect()> window,
                             std::function<bool(const QPoint&)> usable, QObject* parent)
    : QObject(parent),
      m_stations(stations),
      m_undo(undo),
      m_window(std::move(window)),
      m_usable(std::move(usable)) {}

void StationEditor::attach(MapView* view) {
  connect(view, &MapView::cellPressed, this, [this](QPoint cell) {
    m_press_cell = m_drag_cell = cell;
    m_moved = false;
    ++m_drag;
    const auto window = m_window();
    if (!window.contains(cell)) {
      Q_EMIT hint(
          tr("Stations go inside the target window (black square); move it "
             "with the region shift Δ."));
      return;
    }
    // A press on an empty cell adds a station at once; one on a station may become a drag.
    if (!m_stations->contains(cell - window.topLeft())) {
      clickCell(cell);
      m_press_cell = {-1, -1};
    }
  });
  connect(view, &MapView::cellDragged, this, [this](QPoint cell) {
    if (m_press_cell.x() < 0 || !m_window().contains(cell)) return;
    if (moveStation(m_drag_cell, cell, m_drag)) {
      m_drag_cell = cell;
      m_moved = true;
    }
  });
  connect(view, &MapView::released, this, [this](QPoint) {
    if (m_press_cell.x() >= 0 && !m_moved) clickCell(m_press_cell);  // click on a station
    m_press_cell = {-1, -1};
  });
}

bool StationEditor::clickCell(const QPoint& cell) {
  const auto window = m_window();
  if (!window.contains(cell)) return false;
  const auto local = cell - window.topLeft();
  if (m_click_filter && m_click_filter(local)) return true;
  auto cells = m_stations->cells();
  if (m_stations->contains(local)) {
    cells.erase(std::find(cells.begin(), cells.end(), local));
    m_undo->push(new EditStationsCommand(m_stations, std::move(cells), tr("Remove station")));
  } else {
    cells.push_back(local);
    m_undo->push(new EditStationsCommand(m_stations, std::move(cells), tr("Add station")));
  }
  return true;
}

bool StationEditor::moveStation(const QPoint& from, const QPoint& to, int drag) {
  const auto window = m_window();
  if (!window.contains(from) || !window.contains(to)) return false;
  const auto a = from - window.topLeft(), b = to - window.topLeft();
  if (!m_stations->contains(a) || m_stations->contains(b)) return false;
  auto cells = m_stations->cells();
  *std::find(cells.begin(), cells.end(), a) = b;
  m_undo->push(new EditStationsCommand(m_stations, std::move(cells), tr("Move station"), drag));
  return true;
}

void StationEditor::randomStations(int n) {
  const auto window = m_window();
  const int w = window.width();
  std::vector<int> all;
  for (int i = 0; i < w * w; ++i) {
    if (m_usable({window.left() + i % w, window.top() + i / w})) all.push_back(i);
  }
  std::mt19937_64 engine(m_random_seed++);
  std::shuffle(all.begin(), all.end(), engine);
  std::vector<QPoint> cells;
  for (int i = 0; i < std::clamp(n, 0, int(all.size())); ++i)
    cells.emplace_back(all[size_t(i)] % w, all[size_t(i)] / w);
  m_undo->push(new EditStationsCommand(m_stations, std::move(cells), tr("Random stations")));
}

}  // namespace npe::widgets
