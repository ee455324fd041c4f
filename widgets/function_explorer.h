#pragma once
// The "1-D functions" tab: place context points, shift them by Δ, compare models live.

#include <vector>

#include <QTimer>
#include <QWidget>

#include "ground_truth.h"
#include "model_entry.h"
#include "prediction_service.h"
#include "session.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QSlider;
class QSpinBox;
class QTableWidget;
class QUndoStack;

namespace npe::widgets {

class FunctionPlot;
class PointSet;

class FunctionExplorer final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(FunctionExplorer)

 public:
  /// Loads the shipped 1-D models found by npe::find_shipped_models("gp1d"); neural models run
  /// on `device` (the GP baselines always on the CPU).
  explicit FunctionExplorer(QWidget* parent = nullptr, torch::Device device = torch::kCPU);
  ~FunctionExplorer() override;

  QUndoStack* undoStack() const { return m_undo; }
  FunctionPlot* plot() const { return m_plot; }
  PointSet* points() const { return m_points; }
  const std::vector<ModelEntry>& models() const { return m_models; }

  double shift() const { return m_shift; }
  void setShift(double shift);
  void setModelEnabled(const QString& id, bool enabled);
  /// Replaces the context with n noisy samples of the ground truth (undoable).
  void sampleContext(int n);

  Session session() const;
  /// Applies a session; throws npe::Error (nothing changes) when a checkpoint it names fails.
  void applySession(const Session& session);
  /// Throws npe::DataError / npe::CheckpointError; the current state is kept on error.
  void loadSession(const QString& path);
  void saveSession(const QString& path) const;
  /// Adds a model from a checkpoint file and shows it. Throws npe::CheckpointError.
  void openCheckpoint(const QString& path);
  /// PNG, PDF or SVG by suffix. Throws npe::Error.
  void exportPlot(const QString& path);
  void fitView();

 Q_SIGNALS:
  /// A prediction round was drawn; refined = the settled round with all metrics.
  void predictionsUpdated(bool refined);
  void statusMessage(const QString& message);

 private Q_SLOTS:
  void onAddRequested(QPointF point);
  void onMoveRequested(int index, QPointF point, int drag_id);
  void onRemoveRequested(int index);
  void onPredictions(const npe::widgets::PredictionResult& result);
  void onAttention(const npe::widgets::AttentionResult& result);
  void onHovered(double x);
  void onModelItemChanged(QListWidgetItem* item);
  void openSweep();

 private:
  QWidget* buildSidePanel();
  QWidget* buildShiftBar();
  void addModel(ModelEntry entry, bool enabled);
  void resampleTruth();
  void applyTruthSettings();
  void redrawData();
  void schedulePredictions(bool refine);
  std::vector<QPointF> displayPoints() const;
  void appendDisplayContext(std::vector<double>& xc, std::vector<double>& yc) const;
  QString describeModels() const;

  PointSet* m_points = nullptr;
  QUndoStack* m_undo = nullptr;
  FunctionPlot* m_plot = nullptr;
  PredictionService* m_service = nullptr;
  QTimer m_refine_timer;
  QTimer m_view_timer;

  // Ground truth controls.
  QComboBox* m_mode = nullptr;
  QComboBox* m_kernel = nullptr;
  QDoubleSpinBox* m_lengthscale = nullptr;
  QDoubleSpinBox* m_noise = nullptr;
  QSpinBox* m_sample_count = nullptr;
  QCheckBox* m_show_truth = nullptr;
  QSlider* m_shift_slider = nullptr;
  QDoubleSpinBox* m_shift_box = nullptr;
  QListWidget* m_model_list = nullptr;
  QTableWidget* m_metrics = nullptr;
  QCheckBox* m_attention = nullptr;
  QComboBox* m_attention_model = nullptr;

  GroundTruth m_truth;
  bool m_has_truth = true;
  std::vector<ModelEntry> m_models;
  torch::Device m_device = torch::kCPU;
  double m_shift = 0.0;
  bool m_user_view = false;
  uint64_t m_serial = 0;
  uint64_t m_sample_seed = 100;
  std::map<QString, double> m_last_ms;
};

}  // namespace npe::widgets
