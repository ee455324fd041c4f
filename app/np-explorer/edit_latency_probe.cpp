#include "edit_latency_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <QApplication>
#include <QTimer>
#include <QUndoStack>

#include "function_explorer.h"
#include "function_plot.h"
#include "point_set.h"

namespace npe::app {

EditLatencyProbe::EditLatencyProbe(widgets::FunctionExplorer* explorer, int edits, QObject* parent)
    : QObject(parent), m_explorer(explorer), m_edits(edits) {
  connect(explorer, &widgets::FunctionExplorer::predictionsUpdated, this,
          &EditLatencyProbe::onPredictions);
}

void EditLatencyProbe::onPredictions(bool refined) {
  if (!m_started) {
    if (!refined) return;
    m_started = true;
    QTimer::singleShot(100, this, &EditLatencyProbe::edit);
    return;
  }
  if (!m_waiting) return;
  // Include the drawing: repaint now instead of at the next event-loop pass.
  m_explorer->plot()->replot(QCustomPlot::rpImmediateRefresh);
  m_ms.push_back(m_timer.nsecsElapsed() / 1e6);
  m_waiting = false;
  if (static_cast<int>(m_ms.size()) >= m_edits) {
    report();
    return;
  }
  // A short pause, shorter than the refinement delay, like a hand dragging a point.
  QTimer::singleShot(30, this, &EditLatencyProbe::edit);
}

void EditLatencyProbe::edit() {
  auto* points = m_explorer->points();
  if (points->size() == 0) {
    std::fprintf(stderr, "np-explorer: no context point to move\n");
    QApplication::exit(1);
    return;
  }
  const int index = static_cast<int>(m_ms.size()) % points->size();
  const QPointF from = points->points()[index];
  const double step = (m_ms.size() % 2 == 0 ? 0.05 : -0.05);
  m_waiting = true;
  m_timer.start();
  m_explorer->undoStack()->push(new widgets::MovePointCommand(
      points, index, from, from + QPointF(step, step), static_cast<int>(m_ms.size()) + 1000));
}

void EditLatencyProbe::report() {
  auto sorted = m_ms;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) { return sorted[static_cast<size_t>(q * (sorted.size() - 1) + 0.5)]; };
  QStringList shown;
  for (const auto& m : m_explorer->models()) {
    if (m.enabled) shown << m.name;
  }
  std::printf(
      "edit-to-plot latency over %zu edits (%s): median %.1f ms, p10 %.1f ms, p90 %.1f ms\n",
      sorted.size(), qPrintable(shown.join(", ")), at(0.5), at(0.1), at(0.9));
  QApplication::exit(0);
}

}  // namespace npe::app
