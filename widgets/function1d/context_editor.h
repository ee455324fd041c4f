#pragma once
// The 1-D tab's context as the user edits it: points are kept at Δ = 0 (PointSet) and shown
// at Δ, so a shift never rewrites them; every edit made on the shown points is one undoable
// command, in display coordinates.

#include <vector>

#include <QObject>
#include <QPointF>
#include <QString>

class QUndoStack;

namespace npe::widgets {

class PointSet;

class ContextEditor final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ContextEditor)

 public:
  explicit ContextEditor(QObject* parent = nullptr);

  PointSet* points() const { return m_points; }
  QUndoStack* undoStack() const { return m_undo; }

  double shift() const { return m_shift; }
  /// Moves what is shown; the stored points and the undo history stay.
  void setShift(double shift) { m_shift = shift; }
  /// The points as shown: x + Δ.
  std::vector<QPointF> shown() const;

  // Edits in display coordinates (non-finite coordinates and bad indices are ignored).
  void add(QPointF shown);
  /// Moves of one drag (same drag_id) merge into one undo step.
  void move(int index, QPointF shown, int drag_id);
  void remove(int index);
  /// Replaces every point; `shown` tells whether they are in display coordinates or at Δ = 0.
  void replace(std::vector<QPointF> points, bool shown, const QString& label);
  /// For --measure-edit-latency: nudges the i-th point (cyclically) by ±0.05; false if empty.
  bool nudge(int index);

 private:
  PointSet* m_points;
  QUndoStack* m_undo;
  double m_shift = 0.0;
};

}  // namespace npe::widgets
