#pragma once
// "Δ sweep": log-likelihood against Δ for the shown models on a fixed set of sampled GP tasks,
// computed on a background thread with progress and cancel (the paper's Figure 2, live).

#include <atomic>
#include <vector>

#include <QDialog>

#include "common/model_entry.h"

class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QThread;

namespace npe::widgets {

class SweepDialog final : public QDialog {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(SweepDialog)

 public:
  /// Shifts 0, 0.25, ..., 3 on `tasks` GP tasks (fixed seed), for each model.
  SweepDialog(std::vector<ModelEntry> models, QWidget* parent = nullptr, int tasks = 64);
  ~SweepDialog() override;

  void start();
  /// Results so far: [model][shift index] mean log-likelihood (NaN where not computed).
  const std::vector<std::vector<double>>& results() const { return m_results; }
  const std::vector<double>& shifts() const { return m_shifts; }

 Q_SIGNALS:
  void finished();
  /// From the sweep's thread to the dialog's (queued): one result, then the end of the sweep.
  void resultReady(int model, int shift, double ll);
  void workDone(const QString& error);

 private:
  void onResult(int model, int shift, double ll);
  void onDone(const QString& error);

  std::vector<ModelEntry> m_models;
  std::vector<double> m_shifts;
  std::vector<std::vector<double>> m_results;
  int m_tasks;
  QCustomPlot* m_plot = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QPushButton* m_cancel = nullptr;
  QThread* m_thread = nullptr;
  std::atomic<bool> m_cancelled{false};
};

}  // namespace npe::widgets
