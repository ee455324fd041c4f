#include "edit_latency_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <QApplication>
#include <QTimer>

#include "common/explorer_panel.h"
#include "unattended_exit.h"

namespace npe::app {

EditLatencyProbe::EditLatencyProbe(widgets::ExplorerPanel* panel, int edits, int time_limit_ms,
                                   QObject* parent)
    : QObject(parent), m_panel(panel), m_edits(edits), m_time_limit_ms(time_limit_ms) {
  connect(panel, &widgets::ExplorerPanel::predictionsUpdated, this,
          &EditLatencyProbe::onPredictions);
  QTimer::singleShot(time_limit_ms, this, &EditLatencyProbe::giveUp);
}

void EditLatencyProbe::giveUp() {
  std::fprintf(stderr,
               "np-explorer: the edit-latency measurement did not finish within %g s "
               "(--time-limit): %zu of %d edits measured%s\n",
               m_time_limit_ms / 1000.0, m_ms.size(), m_edits,
               m_started ? "" : ", the first prediction round never finished");
  exit_without_waiting_for_models(1);
}

void EditLatencyProbe::onPredictions(bool refined) {
  if (!m_started) {
    if (!refined) return;
    m_started = true;
    QTimer::singleShot(100, this, &EditLatencyProbe::edit);
    return;
  }
  // Only a round computed after the edit answers it (a settle-time round still running when
  // the edit came would otherwise be counted).
  if (!m_waiting || m_panel->lastRoundStarted() < m_edited) return;
  // Include the drawing: repaint now instead of at the next event-loop pass.
  const qint64 before_drawing = m_timer.nsecsElapsed();
  m_panel->repaintNow();
  const qint64 done = m_timer.nsecsElapsed();
  m_ms.push_back(done / 1e6);
  m_drawing_ms.push_back((done - before_drawing) / 1e6);
  for (const auto& [name, ms] : m_panel->lastRoundTimes()) m_model_ms[name].push_back(ms);
  m_prediction_ms.push_back(m_panel->lastRoundMilliseconds());
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
  m_edited = std::chrono::steady_clock::now();
  if (!m_panel->makeProbeEdit(static_cast<int>(m_ms.size()))) {
    std::fprintf(stderr, "np-explorer: nothing to edit in the %s tab\n",
                 qPrintable(m_panel->panelId()));
    QApplication::exit(1);
  }
}

namespace {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(q * (values.size() - 1) + 0.5)];
}

}  // namespace

void EditLatencyProbe::report() {
  std::printf(
      "%s tab: edit-to-view latency over %zu edits (%s): median %.1f ms, p10 %.1f ms, "
      "p90 %.1f ms, max %.1f ms\n",
      qPrintable(m_panel->panelId()), m_ms.size(),
      qPrintable(m_panel->shownModelNames().join(", ")), quantile(m_ms, 0.5), quantile(m_ms, 0.1),
      quantile(m_ms, 0.9), quantile(m_ms, 1.0));
  // The halves: the models run on the worker thread (side by side where each has one thread),
  // then the GUI thread sets the curves and repaints; the rest is queueing and curve updates.
  std::printf("  predictions (worker, the whole round): median %.1f ms, max %.1f ms\n",
              quantile(m_prediction_ms, 0.5), quantile(m_prediction_ms, 1.0));
  for (const auto& [name, ms] : m_model_ms) {
    std::printf("    %-20s median %.1f ms, max %.1f ms\n", qPrintable(name), quantile(ms, 0.5),
                quantile(ms, 1.0));
  }
  std::printf("  drawing (repaint): median %.1f ms, max %.1f ms\n", quantile(m_drawing_ms, 0.5),
              quantile(m_drawing_ms, 1.0));
  std::vector<double> rest(m_ms.size());
  for (size_t i = 0; i < m_ms.size(); ++i) rest[i] = m_ms[i] - m_prediction_ms[i] - m_drawing_ms[i];
  std::printf("  the rest (queueing, curve updates): median %.1f ms, max %.1f ms\n",
              quantile(rest, 0.5), quantile(rest, 1.0));
  // The slowest edits, split the same way: whether an outlier is a slow model, a slow repaint
  // or waiting for a core is what decides how to remove it.
  std::vector<size_t> order(m_ms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m_ms[a] > m_ms[b]; });
  std::printf("  slowest edits (edit number: total = predictions + drawing + rest):");
  for (size_t i = 0; i < std::min<size_t>(5, order.size()); ++i) {
    const size_t e = order[i];
    std::printf("%s #%zu: %.1f = %.1f + %.1f + %.1f ms", i ? ";" : "", e + 1, m_ms[e],
                m_prediction_ms[e], m_drawing_ms[e], rest[e]);
  }
  std::printf("\n");
  QApplication::exit(0);
}

}  // namespace npe::app
