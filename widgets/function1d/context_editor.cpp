#include "function1d/context_editor.h"

#include <cmath>

#include <QUndoStack>

#include "function1d/point_set.h"

namespace npe::widgets {

ContextEditor::ContextEditor(QObject* parent)
    : QObject(parent), m_points(new PointSet(this)), m_undo(new QUndoStack(this)) {}

std::vector<QPointF> ContextEditor::shown() const {
  std::vector<QPointF> points;
  points.reserve(m_points->points().size());
  for (const auto& p : m_points->points()) points.emplace_back(p.x() + m_shift, p.y());
  return points;
}

void ContextEditor::add(QPointF shown) {
  if (!std::isfinite(shown.x()) || !std::isfinite(shown.y())) return;
  m_undo->push(new AddPointCommand(m_points, {shown.x() - m_shift, shown.y()}));
}

void ContextEditor::move(int index, QPointF shown, int drag_id) {
  if (index < 0 || index >= m_points->size()) return;
  if (!std::isfinite(shown.x()) || !std::isfinite(shown.y())) return;
  const QPointF to(shown.x() - m_shift, shown.y());
  m_undo->push(new MovePointCommand(m_points, index, m_points->points()[index], to, drag_id));
}

void ContextEditor::remove(int index) {
  if (index < 0 || index >= m_points->size()) return;
  m_undo->push(new RemovePointCommand(m_points, index));
}

void ContextEditor::replace(std::vector<QPointF> points, bool shown, const QString& label) {
  if (shown) {
    for (auto& p : points) p.rx() -= m_shift;
  }
  m_undo->push(new ReplacePointsCommand(m_points, std::move(points), label));
}

bool ContextEditor::nudge(int index) {
  if (m_points->size() == 0) return false;
  const int point = index % m_points->size();
  const QPointF from = m_points->points()[point];
  const double step = index % 2 == 0 ? 0.05 : -0.05;
  // A drag id of its own per edit: each nudge is its own undo step, as a separate drag is.
  m_undo->push(
      new MovePointCommand(m_points, point, from, from + QPointF(step, step), index + 1000));
  return true;
}

}  // namespace npe::widgets
