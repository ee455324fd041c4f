#include "image/context_mask.h"

#include <algorithm>

namespace npe::widgets {

ContextMask::ContextMask(int side, QObject* parent)
    : QObject(parent), m_side(side), m_on(static_cast<size_t>(side * side), 0) {}

int ContextMask::count() const {
  return static_cast<int>(std::count(m_on.begin(), m_on.end(), 1));
}

std::vector<int> ContextMask::indices() const {
  std::vector<int> out;
  for (size_t i = 0; i < m_on.size(); ++i) {
    if (m_on[i]) out.push_back(static_cast<int>(i));
  }
  return out;
}

void ContextMask::set(const std::vector<int>& indices, bool on) {
  for (int i : indices) {
    if (i >= 0 && i < static_cast<int>(m_on.size())) m_on[static_cast<size_t>(i)] = on ? 1 : 0;
  }
  Q_EMIT changed();
}

void ContextMask::replace(const std::vector<int>& indices) {
  std::fill(m_on.begin(), m_on.end(), 0);
  set(indices, true);
}

void ContextMask::resize(int side) {
  m_side = side;
  m_on.assign(static_cast<size_t>(side * side), 0);
  Q_EMIT changed();
}

PaintPixelsCommand::PaintPixelsCommand(ContextMask* mask, const std::vector<int>& indices, bool on,
                                       int stroke)
    : m_mask(mask), m_on(on), m_stroke(stroke) {
  for (int i : indices) {
    if (i >= 0 && i < mask->side() * mask->side() && mask->at(i) != on) m_changed.push_back(i);
  }
  setText(on ? QObject::tr("Paint context") : QObject::tr("Erase context"));
}

void PaintPixelsCommand::redo() {
  m_mask->set(m_changed, m_on);
}

void PaintPixelsCommand::undo() {
  m_mask->set(m_changed, !m_on);
}

bool PaintPixelsCommand::mergeWith(const QUndoCommand* other) {
  const auto* next = static_cast<const PaintPixelsCommand*>(other);
  if (next->m_stroke != m_stroke || next->m_on != m_on) return false;
  m_changed.insert(m_changed.end(), next->m_changed.begin(), next->m_changed.end());
  return true;
}

ReplaceMaskCommand::ReplaceMaskCommand(ContextMask* mask, std::vector<int> indices,
                                       const QString& text)
    : m_mask(mask), m_before(mask->indices()), m_after(std::move(indices)) {
  setText(text);
}

void ReplaceMaskCommand::redo() {
  m_mask->replace(m_after);
}

void ReplaceMaskCommand::undo() {
  m_mask->replace(m_before);
}

}  // namespace npe::widgets
