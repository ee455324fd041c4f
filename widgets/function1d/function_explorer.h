#pragma once
// The "1-D functions" tab: place context points, shift them by Δ, compare models live.

#include <memory>
#include <optional>
#include <vector>

#include <QTimer>

#include "common/explorer_panel.h"
#include "common/model_entry.h"
#include "common/prediction_service.h"
#include "function1d/correlation_overlay.h"
#include "function_session.h"
#include "npe/data/function_scene.h"
#include "npe/ground/task.h"

class QUndoStack;

namespace npe::widgets {

class AttentionProbe;
class EpisodeBox;
class EpisodeRunner;
class ObservationSuggester;
class SuggestionBox;
class BandsChoice;
class ContextEditor;
class ExplorerController;
class FunctionPlot;
class GroundTruthBox;
class KernelPosteriorBox;
class ModelPresets;
class SamplesBox;
class TeachingAidsBox;
class MetricsTable;
class ModelList;
class PointSet;
class ShiftControl;

class FunctionExplorer final : public ExplorerPanel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(FunctionExplorer)

 public:
  /// Largest |Δ| accepted (spin box, sessions, --shift): core's limit for every translation.
  static constexpr double kMaxShift = kMaxTranslation;

  /// Loads the shipped 1-D models found by npe::find_shipped_models("gp1d"); neural models run
  /// on `device` (the GP baselines always on the CPU).
  explicit FunctionExplorer(QWidget* parent = nullptr, torch::Device device = torch::kCPU);
  ~FunctionExplorer() override;

  // ExplorerPanel
  QString panelId() const override { return "functions"; }
  QString title() const override { return tr("1-D functions"); }
  QUndoStack* undoStack() const override;
  QJsonObject saveSection() const override { return session().to_json(); }
  void restoreSection(const QJsonObject& section) override;
  void exportView(const QString& path) override;
  /// x (display coordinates), y (the truth at held-out points, else NaN), held_out (1 for the
  /// 100 held-out points, 0 on the plotted grid) and each model's mean and std. Showing a
  /// series: in the data's units, x and y named as its columns, as the axes read.
  PointTable predictionTable() const override;
  /// Showing a series of date-times: each row's date-time.
  std::vector<std::string> firstColumnLabels(const PointTable& table) const override;
  /// CSV, TSV and whitespace-separated text files of (x, y) points.
  QStringList dataSuffixes() const override { return {"csv", "tsv", "txt", "dat"}; }
  /// Replaces the context with the file's points (undoable; x taken as shown, i.e. at the
  /// current Δ). Columns named x and y are used, else the first two, or the user chooses when
  /// there are more. Bad rows and NaN rows are reported. Throws npe::DataError (state kept).
  void openDataFile(const QString& path) override;
  bool makeProbeEdit(int index) override;
  void repaintNow() override;

  FunctionPlot* plot() const { return m_plot; }
  PointSet* points() const;
  const std::vector<ModelEntry>& models() const;
  MetricsTable* metrics() const;

  double shift() const;
  void setShift(double shift);
  void setModelEnabled(const QString& id, bool enabled);
  /// Replaces the context with n noisy samples of the ground truth (undoable).
  void sampleContext(int n);

  /// Coherent samples (K per joint model; 0 hides them) and the hover correlation.
  void setSamples(int count);
  int samples() const;
  void resample();
  void setCorrelationModel(const QString& id);
  /// The kernel posterior of GP (Bayes over kernels), shown while that model is enabled.
  KernelPosteriorBox* kernelPosterior() const { return m_kernel_box; }
  ModelPresets* presets() const { return m_presets; }
  /// "Where to observe next?": its controls and the proposal shown.
  SuggestionBox* suggestionBox() const { return m_suggestion_box; }
  ObservationSuggester* suggester() const { return m_suggester; }
  /// "Observe the truth": its controls and the episode it runs.
  EpisodeBox* episodeBox() const { return m_episode_box; }
  EpisodeRunner* episodeRunner() const { return m_episode_runner; }
  /// Hover at x as the mouse would (for tests).
  void hoverAt(double x) { onHovered(x); }

  Session session() const;
  /// Applies a session; throws npe::Error (nothing changes) when a checkpoint it names fails.
  void applySession(const Session& session);
  void fitView() override;
  bool extrasPending() const override;

 private Q_SLOTS:
  void onPredictions(const npe::widgets::PredictionResult& result);
  void onHovered(double x);
  void onModelToggled(const QString& id, bool enabled);
  void onModelAdded(const QString& id);
  void showCorrelation();
  void openSweep();

 private:
  QWidget* buildSidePanel();
  QWidget* buildShiftBar();
  void redrawData();
  void schedulePredictions(bool refine);
  /// The data shown now: the context (Δ included), and the truth's held-out points and kernel.
  FunctionScene scene() const;
  /// The prediction request for the context, shift and view shown now.
  std::optional<PredictionRequest> sceneRequest(bool refine) const;
  /// Offers the data of a model trained on a series in the ground-truth box; with `show`, shows
  /// a test window with context sampled from it. False (with a status message when its data
  /// cannot be read) for other models.
  bool offerSeriesOf(const ModelEntry& entry, bool show);
  /// Axis ticks in the data's units while a series is shown, plain x and y otherwise.
  void showDataAxes();
  /// Shows the kernel posterior of the round's first enabled model that has one; hides the box
  /// once the model shown is disabled.
  void showKernelPosterior(const PredictionResult& result);

  ContextEditor* m_context = nullptr;
  FunctionPlot* m_plot = nullptr;
  ExplorerController* m_controller = nullptr;
  QTimer m_view_timer;

  GroundTruthBox* m_truth_box = nullptr;
  BandsChoice* m_bands = nullptr;
  ShiftControl* m_shift_control = nullptr;
  ModelList* m_model_list = nullptr;
  TeachingAidsBox* m_aids = nullptr;
  AttentionProbe* m_attention = nullptr;
  SuggestionBox* m_suggestion_box = nullptr;
  ObservationSuggester* m_suggester = nullptr;
  EpisodeBox* m_episode_box = nullptr;
  EpisodeRunner* m_episode_runner = nullptr;
  // Joint predictions: samples and the correlation shown on hover.
  SamplesBox* m_samples = nullptr;
  uint64_t m_draw_seed = 1;
  std::unique_ptr<CorrelationOverlay> m_correlation;  // on m_plot
  KernelPosteriorBox* m_kernel_box = nullptr;
  ModelPresets* m_presets = nullptr;
  QString m_kernel_model;  ///< id of the model whose kernel posterior is shown

  torch::Device m_device = torch::kCPU;
  bool m_user_view = false;
  /// While a session's models are added: they do not switch the truth to their data.
  bool m_applying_session = false;
  uint64_t m_sample_seed = 100;
};

}  // namespace npe::widgets
