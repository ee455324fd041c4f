#pragma once
// The stations of the map tab: grid cells of the target window (relative to it, so they move
// with the window when the region is shifted) that observe the field, and the undoable edits.

#include <vector>

#include <QObject>
#include <QPoint>
#include <QUndoCommand>

namespace npe::widgets {

class StationSet final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(StationSet)

 public:
  using QObject::QObject;
  /// Cells (x = column, y = row) within the window, in insertion order.
  const std::vector<QPoint>& cells() const { return m_cells; }
  bool contains(const QPoint& cell) const;
  int count() const { return static_cast<int>(m_cells.size()); }
  /// Replaces every station (duplicates dropped); emits changed().
  void replace(std::vector<QPoint> cells);

 Q_SIGNALS:
  void changed();

 private:
  std::vector<QPoint> m_cells;
};

/// Any edit of the stations: add, remove, move, random, clear. Moves of one drag merge into
/// one undo step.
class EditStationsCommand final : public QUndoCommand {
 public:
  EditStationsCommand(StationSet* set, std::vector<QPoint> after, const QString& text,
                      int drag = -1);
  void redo() override { m_set->replace(m_after); }
  void undo() override { m_set->replace(m_before); }
  int id() const override { return m_drag >= 0 ? 5151 : -1; }
  bool mergeWith(const QUndoCommand* other) override;

 private:
  StationSet* m_set;
  std::vector<QPoint> m_before, m_after;
  int m_drag;
};

}  // namespace npe::widgets
