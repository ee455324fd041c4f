#include "point_set.h"

namespace npe::widgets {

PointSet::PointSet(QObject* parent) : QObject(parent) {}

void PointSet::insert(int index, QPointF point) {
  m_points.insert(m_points.begin() + index, point);
  Q_EMIT changed();
}

void PointSet::remove(int index) {
  m_points.erase(m_points.begin() + index);
  Q_EMIT changed();
}

void PointSet::move(int index, QPointF point) {
  m_points[index] = point;
  Q_EMIT changed();
}

void PointSet::replace(std::vector<QPointF> points) {
  m_points = std::move(points);
  Q_EMIT changed();
}

AddPointCommand::AddPointCommand(PointSet* set, QPointF point)
    : QUndoCommand(QObject::tr("Add point")), m_set(set), m_point(point), m_index(set->size()) {}
void AddPointCommand::redo() {
  m_set->insert(m_index, m_point);
}
void AddPointCommand::undo() {
  m_set->remove(m_index);
}

RemovePointCommand::RemovePointCommand(PointSet* set, int index)
    : QUndoCommand(QObject::tr("Remove point")),
      m_set(set),
      m_index(index),
      m_point(set->points().at(index)) {}
void RemovePointCommand::redo() {
  m_set->remove(m_index);
}
void RemovePointCommand::undo() {
  m_set->insert(m_index, m_point);
}

MovePointCommand::MovePointCommand(PointSet* set, int index, QPointF from, QPointF to, int drag_id)
    : QUndoCommand(QObject::tr("Move point")),
      m_set(set),
      m_index(index),
      m_from(from),
      m_to(to),
      m_drag_id(drag_id) {}
void MovePointCommand::redo() {
  m_set->move(m_index, m_to);
}
void MovePointCommand::undo() {
  m_set->move(m_index, m_from);
}
bool MovePointCommand::mergeWith(const QUndoCommand* other) {
  const auto* move = static_cast<const MovePointCommand*>(other);
  if (move->m_drag_id != m_drag_id || move->m_index != m_index) return false;
  m_to = move->m_to;
  return true;
}

ReplacePointsCommand::ReplacePointsCommand(PointSet* set, std::vector<QPointF> points,
                                           const QString& text)
    : QUndoCommand(text), m_set(set), m_before(set->points()), m_after(std::move(points)) {}
void ReplacePointsCommand::redo() {
  m_set->replace(m_after);
}
void ReplacePointsCommand::undo() {
  m_set->replace(m_before);
}

}  // namespace npe::widgets
