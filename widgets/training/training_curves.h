#pragma once
// Live curves of one training job: smoothed training loss, validation and shifted-Δ
// log-likelihood, and equivariance error (log scale), against step or training time.

#include <vector>

#include <QJsonObject>
#include <QWidget>

class QCPAxisRect;
class QCPErrorBars;
class QCPGraph;
class QCustomPlot;

namespace npe::widgets {

/// The points of one job's curves (kept by the job, drawn by TrainingCurves).
struct TrainingHistory {
  struct Point {
    double step = 0.0;
    double wall_time_s = 0.0;
    double value = 0.0;
    /// Standard error of `value` (0 when not measured).
    double error = 0.0;
  };
  std::vector<Point> loss, validation_ll, shifted_ll, equivariance_error;
  /// Adds what a "progress" or "validation" event carries; other events are ignored.
  void add(const QJsonObject& event);
  void clear();
};

class TrainingCurves final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TrainingCurves)

 public:
  explicit TrainingCurves(QWidget* parent = nullptr);
  /// Draws `history` (nullptr clears); `shift_label` names the shifted curve ("Δ = 2").
  void show(const TrainingHistory* history, const QString& shift_label = {});
  /// Abscissa: false = step, true = training time in seconds.
  void setTimeAxis(bool time);
  bool timeAxis() const { return m_time_axis; }
  QCustomPlot* plot() const { return m_plot; }
  /// Points drawn in each graph (tests).
  int pointCount(int graph) const;

 private:
  QCustomPlot* m_plot = nullptr;
  std::vector<QCPGraph*> m_graphs;
  /// Error bars (± one standard error) of the validation and shifted curves.
  std::vector<QCPErrorBars*> m_error_bars;
  std::vector<QCPAxisRect*> m_rects;
  const TrainingHistory* m_history = nullptr;
  QString m_shift_label;
  bool m_time_axis = false;
};

}  // namespace npe::widgets
