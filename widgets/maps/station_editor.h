#pragma once
// Editing the maps tab's stations: a click in the target window adds a station or removes the
// one there, a press on a station and a drag move it, and "Random" places stations on usable
// cells; every edit is one undoable command (a drag is merged into one).

#include <functional>

#include <QObject>
#include <QPoint>
#include <QRect>

class QUndoStack;

namespace npe::widgets {

class MapView;
class StationSet;

class StationEditor final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(StationEditor)

 public:
  /// `window`: the target window (grid cells) now; `usable`: whether a station may report from
  /// a cell (it has a value now and place features).
  StationEditor(StationSet* stations, QUndoStack* undo, std::function<QRect()> window,
                std::function<bool(const QPoint& cell)> usable, QObject* parent = nullptr);

  /// Edits stations with the mouse on this view.
  void attach(MapView* view);
  /// A click on a window cell (relative to the window) is offered to `filter` first; true: it
  /// took the click (an episode observing where the user clicks), no edit is made.
  void setClickFilter(std::function<bool(const QPoint& cell)> filter) {
    m_click_filter = std::move(filter);
  }
  /// Adds a station at a grid cell of the window, or removes the one there. False outside it.
  bool clickCell(const QPoint& cell);
  /// Moves the station at `from` to the free cell `to` (both grid cells of the window); edits
  /// with the same `drag` merge into one undo step. False when there is nothing to move.
  bool moveStation(const QPoint& from, const QPoint& to, int drag);
  /// Replaces the stations with n at random usable cells of the window (fewer if there are not
  /// so many).
  void randomStations(int n);

 Q_SIGNALS:
  /// A hint for the status bar (a press outside the window).
  void hint(const QString& message);

 private:
  StationSet* m_stations;
  QUndoStack* m_undo;
  std::function<QRect()> m_window;
  std::function<bool(const QPoint&)> m_usable;
  std::function<bool(const QPoint&)> m_click_filter;
  int m_drag = 0;
  QPoint m_press_cell{-1, -1}, m_drag_cell{-1, -1};
  bool m_moved = false;
  uint64_t m_random_seed = 1;
};

}  // namespace npe::widgets
