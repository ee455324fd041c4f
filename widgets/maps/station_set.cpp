#include "maps/station_set.h"

#include <algorithm>

namespace npe::widgets {

bool StationSet::contains(const QPoint& cell) const {
  return std::find(m_cells.begin(), m_cells.end(), cell) != m_cells.end();
}

void StationSet::replace(std::vector<QPoint> cells) {
  std::vector<QPoint> unique;
  for (const auto& c : cells) {
    if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(c);
  }
  if (unique == m_cells) return;
  m_cells = std::move(unique);
  Q_EMIT changed();
}

EditStationsCommand::EditStationsCommand(StationSet* set, std::vector<QPoint> after,
                                         const QString& text, int drag)
    : QUndoCommand(text),
      m_set(set),
      m_before(set->cells()),
      m_after(std::move(after)),
      m_drag(drag) {}

bool EditStationsCommand::mergeWith(const QUndoCommand* other) {
  const auto* o = dynamic_cast<const EditStationsCommand*>(other);
  if (!o || o->m_drag != m_drag || o->m_set != m_set) return false;
  m_after = o->m_after;
  return true;
}

}  // namespace npe::widgets
