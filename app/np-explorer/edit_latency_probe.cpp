#include "edit_latency_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <QApplication>
#include <QTimer>

#include "common/explorer_panel.h"

namespace npe::app {

EditLatencyProbe::EditLatencyProbe(widgets::ExplorerPanel* panel, int edits, QObject* parent)
    : QObject(parent), m_panel(panel), m_edits(edits) {
  connect(panel, &widgets::ExplorerPanel::predictionsUpdated, this,
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
  m_panel->repaintNow();
  m_ms.push_back(m_timer.nsecsElapsed() / 1e6);
  m_waiting = false;
  if (static_cast<int>(m_ms.size()) >= m_edits) {
    report();
    return;
  }
  // A short pause, shorter than the refinement delay, like a hand dragging or painting.
  QTimer::singleShot(30, this, &EditLatencyProbe::edit);
}

void EditLatencyProbe::edit() {
  m_waiting = true;
  m_timer.start();
  if (!m_panel->makeProbeEdit(static_cast<int>(m_ms.size()))) {
    std::fprintf(stderr, "np-explorer: nothing to edit in the %s tab\n",
                 qPrintable(m_panel->panelId()));
    QApplication::exit(1);
  }
}

void EditLatencyProbe::report() {
  auto sorted = m_ms;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) { return sorted[static_cast<size_t>(q * (sorted.size() - 1) + 0.5)]; };
  std::printf(
      "%s tab: edit-to-view latency over %zu edits (%s): median %.1f ms, p10 %.1f ms, "
      "p90 %.1f ms, max %.1f ms\n",
      qPrintable(m_panel->panelId()), sorted.size(),
      qPrintable(m_panel->shownModelNames().join(", ")), at(0.5), at(0.1), at(0.9), sorted.back());
  QApplication::exit(0);
}

}  // namespace npe::app
