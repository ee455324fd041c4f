#pragma once
// The explorer's context points (base coordinates, before the shift) and the undoable edits
// on them.

#include <vector>

#include <QObject>
#include <QPointF>
#include <QUndoCommand>

namespace npe::widgets {

/// Ordered context points in base coordinates. Emits changed() after every modification.
class PointSet final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(PointSet)

 public:
  explicit PointSet(QObject* parent = nullptr);

  const std::vector<QPointF>& points() const { return m_points; }
  int size() const { return static_cast<int>(m_points.size()); }

  void insert(int index, QPointF point);
  void remove(int index);
  void move(int index, QPointF point);
  void replace(std::vector<QPointF> points);

 Q_SIGNALS:
  void changed();

 private:
  std::vector<QPointF> m_points;
};

/// Adds one point (at the end).
class AddPointCommand final : public QUndoCommand {
 public:
  AddPointCommand(PointSet* set, QPointF point);
  void redo() override;
  void undo() override;

 private:
  PointSet* m_set;
  QPointF m_point;
  int m_index;
};

/// Removes the point at an index.
class RemovePointCommand final : public QUndoCommand {
 public:
  RemovePointCommand(PointSet* set, int index);
  void redo() override;
  void undo() override;

 private:
  PointSet* m_set;
  int m_index;
  QPointF m_point;
};

/// Moves a point; consecutive moves of the same drag merge into one undo step.
class MovePointCommand final : public QUndoCommand {
 public:
  MovePointCommand(PointSet* set, int index, QPointF from, QPointF to, int drag_id);
  void redo() override;
  void undo() override;
  int id() const override { return 1; }
  bool mergeWith(const QUndoCommand* other) override;

 private:
  PointSet* m_set;
  int m_index;
  QPointF m_from, m_to;
  int m_drag_id;
};

/// Replaces all points (sample, clear, load).
class ReplacePointsCommand final : public QUndoCommand {
 public:
  ReplacePointsCommand(PointSet* set, std::vector<QPointF> points, const QString& text);
  void redo() override;
  void undo() override;

 private:
  PointSet* m_set;
  std::vector<QPointF> m_before, m_after;
};

}  // namespace npe::widgets
