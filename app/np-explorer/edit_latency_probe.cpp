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
  connect(panel, &widgets::ExplorerPanel::partialPredictionsShown, this,
          &EditLatencyProbe::onPartialPredictions);
  QTimer::singleShot(time_limit_ms, this, &EditLatencyProbe::giveUp);
}

void EditLatencyProbe::giveUp() {
  std::fprintf(stderr,
               "np-explorer: the edit-latency measurement did not finish within %g s "
               "(--time-limit): %zu of %d edits measured%s\n",
               m_time_limit_ms / 1000.0, m_caught_up_ms.size(), m_edits,
               m_started ? "" : ", the first prediction round never finished");
  exit_without_waiting_for_models(1);
}

double EditLatencyProbe::repaintAndTime() {
  const qint64 before_drawing = m_timer.nsecsElapsed();
  m_panel->repaintNow();
  const qint64 done = m_timer.nsecsElapsed();
  m_last_drawing_ms = (done - before_drawing) / 1e6;
  return done / 1e6;
}

void EditLatencyProbe::onPartialPredictions() {
  // Only a round computed after the edit answers it.
  if (!m_started || !m_waiting || m_seen || m_panel->lastDeliveryStarted() < m_edited) return;
  m_ms.push_back(repaintAndTime());
  m_seen = true;
}

void EditLatencyProbe::onPredictions(bool refined, bool caught_up) {
  if (!m_started) {
    if (!refined) return;
    m_started = true;
    QTimer::singleShot(100, this, &EditLatencyProbe::edit);
    return;
  }
  // Only a round computed after the edit answers it (a settle-time round still running when
  // the edit came would otherwise be counted).
  if (!m_waiting || m_panel->lastRoundStarted() < m_edited) return;
  const double ms = repaintAndTime();
  if (!m_seen) m_ms.push_back(ms);
  m_seen = true;
  // A round that skipped a model for a newer request is not caught up; the settled round is.
  if (!caught_up) return;
  m_caught_up_ms.push_back(ms);
  m_drawing_ms.push_back(m_last_drawing_ms);
  for (const auto& [name, model_ms] : m_panel->lastRoundTimes()) {
    m_model_ms[name].push_back(model_ms);
  }
  for (const auto& [name, flops] : m_panel->lastRoundFlops()) m_model_flops[name] = flops;
  m_prediction_ms.push_back(m_panel->lastRoundMilliseconds());
  m_waiting = false;
  if (static_cast<int>(m_caught_up_ms.size()) >= m_edits) {
    report();
    return;
  }
  // A short pause, shorter than the refinement delay, like a hand dragging or painting.
  QTimer::singleShot(30, this, &EditLatencyProbe::edit);
}

void EditLatencyProbe::edit() {
  m_waiting = true;
  m_seen = false;
  m_timer.start();
  m_edited = std::chrono::steady_clock::now();
  if (!m_panel->makeProbeEdit(static_cast<int>(m_caught_up_ms.size()))) {
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
  // The model with the largest median time is the one the others wait for to be caught up.
  QString slowest;
  double slowest_ms = -1.0;
  for (const auto& [name, ms] : m_model_ms) {
    if (quantile(ms, 0.5) > slowest_ms) slowest_ms = quantile(ms, 0.5), slowest = name;
  }
  std::printf("  every model caught up: median %.1f ms, p90 %.1f ms, max %.1f ms (slowest: %s)\n",
              quantile(m_caught_up_ms, 0.5), quantile(m_caught_up_ms, 0.9),
              quantile(m_caught_up_ms, 1.0), qPrintable(slowest));
  // The parts of catching up: the models run on the worker thread (side by side where each has
  // one thread), then the GUI thread sets the curves and repaints; the rest is queueing, the
  // drawing of earlier deliveries and curve updates.
  std::printf("  predictions (worker, the whole round): median %.1f ms, max %.1f ms\n",
              quantile(m_prediction_ms, 0.5), quantile(m_prediction_ms, 1.0));
  // Achieved speed by the model's own FLOP count (prediction_flops, at the context it saw),
  // to set against `npe bench peak` times the threads a model runs on (one per model here).
  for (const auto& [name, ms] : m_model_ms) {
    const auto flops = m_model_flops.find(name);
    const double gflops = flops == m_model_flops.end() || !std::isfinite(flops->second)
                              ? std::nan("")
                              : flops->second / (quantile(ms, 0.5) * 1e6);
    std::printf("    %-20s median %.1f ms, max %.1f ms", qPrintable(name), quantile(ms, 0.5),
                quantile(ms, 1.0));
    if (std::isfinite(gflops)) {
      std::printf(", %.3g GFLOP, %.1f GFLOP/s", flops->second / 1e9, gflops);
    }
    std::printf("\n");
  }
  std::printf("  drawing (repaint): median %.1f ms, max %.1f ms\n", quantile(m_drawing_ms, 0.5),
              quantile(m_drawing_ms, 1.0));
  const size_t n = m_caught_up_ms.size();
  std::vector<double> rest(n);
  for (size_t i = 0; i < n; ++i) rest[i] = m_caught_up_ms[i] - m_prediction_ms[i] - m_drawing_ms[i];
  std::printf(
      "  the rest (queueing, earlier deliveries, curve updates): median %.1f ms, max %.1f "
      "ms\n",
      quantile(rest, 0.5), quantile(rest, 1.0));
  // The slowest edits, split the same way: whether an outlier is a slow model, a slow repaint
  // or waiting for a core is what decides how to remove it.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return m_caught_up_ms[a] > m_caught_up_ms[b]; });
  std::printf("  slowest edits (edit number: caught up = predictions + drawing + rest):");
  for (size_t i = 0; i < std::min<size_t>(5, n); ++i) {
    const size_t e = order[i];
    std::printf("%s #%zu: %.1f = %.1f + %.1f + %.1f ms", i ? ";" : "", e + 1, m_caught_up_ms[e],
                m_prediction_ms[e], m_drawing_ms[e], rest[e]);
  }
  std::printf("\n");
  QApplication::exit(0);
}

}  // namespace npe::app
