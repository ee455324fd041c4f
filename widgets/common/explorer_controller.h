#pragma once
// What every explorer tab does the same way, in one place: the models it can show (the models
// box, the shipped models of its task, checkpoints routed by the task they were trained on,
// their part of a session), the metrics table, and prediction rounds (scheduled from the tab's
// scene, refined once the user pauses, timed). A tab supplies its scene, its controls and its
// drawing; its Task is built by core code (npe/data/*_scene.h) from that scene.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QStringList>
#include <QTimer>

#include "common/model_entry.h"
#include "common/prediction_service.h"

class QGroupBox;

namespace npe {
struct CheckpointMetadata;
}

namespace npe::widgets {

class ExplorerPanel;
class MetricsTable;
class ModelList;
class ModelsBox;

class ExplorerController final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ExplorerController)

 public:
  struct Settings {
    /// The task kinds checkpoints record ("gp1d", "image", "era5"): which checkpoints this tab
    /// opens (checkpoint_fits_tab).
    std::vector<std::string> task_kinds;
    /// The models' inputs (coordinates) and the numbers of outputs the tab shows (the Images
    /// tab: grey and colour pictures), for checkpoints that record no task too.
    int64_t dim_x = 1;
    std::vector<int64_t> dim_y = {1};
    /// What this tab's models are, for the refusal of another task's checkpoint: "an image
    /// model (D_x = 2, D_y = 1)".
    QString model_description;
    /// The folder under models/ with the task's shipped models (find_shipped_models).
    std::string shipped_folder;
    /// Shipped models shown at start ("shipped:<file stem>").
    QStringList default_models;
    /// Entries at the top of the list (baselines) that take no colour of the palette.
    int uncoloured_entries = 0;
    /// What the metrics table's held-out column measures (its tooltip).
    QString metrics_help;
  };

  /// Builds the models box and the metrics box (children of `panel`, placed by the tab) and the
  /// prediction service, and makes `panel` use them. Neural models run on `device`.
  ExplorerController(ExplorerPanel* panel, Settings settings, torch::Device device);
  ~ExplorerController() override;

  ModelsBox* modelsBox() const { return m_models_box; }
  ModelList* models() const { return m_models; }
  QGroupBox* metricsBox() const { return m_metrics_box; }
  MetricsTable* metrics() const { return m_metrics; }
  PredictionService* service() const { return m_service; }
  torch::Device device() const { return m_device; }

  /// How a tab names or marks its entries before they are listed (the images tab tells a
  /// σ-per-pixel model from its twin); applied to every entry added.
  void setEntryDecorator(std::function<void(ModelEntry&)> decorate);
  /// The tab's request for its current scene: the batch, held-out points, shift and extras,
  /// without serial and models (which the controller sets); nullopt when there is nothing to
  /// predict (no data).
  void setSceneRequest(std::function<std::optional<PredictionRequest>(bool refine)> scene);

  /// Adds an entry (see ModelList::add). Emits modelAdded for an entry new to the list.
  QString addModel(ModelEntry entry, bool enabled);
  /// Adds the task's shipped models, the default ones enabled.
  void addShippedModels();
  /// Whether the tab shows the model of this checkpoint: the task it was trained on decides.
  bool accepts(const CheckpointMetadata& metadata) const;
  /// Adds a checkpoint's model, enabled, and predicts with it. Throws npe::CheckpointError for
  /// a file that cannot be loaded or is another task's model.
  void openCheckpoint(const QString& path);

  /// The tab's "models" session part.
  QJsonObject sessionModels() const;
  /// Loads the checkpoints a session's "models" part names that the list lacks, without
  /// changing anything (a session that fails leaves the tab as it was). Throws npe::Error.
  std::vector<ModelEntry> loadSessionModels(const QJsonObject& models) const;
  /// Lists the loaded entries and enables exactly the session's models.
  void applySessionModels(std::vector<ModelEntry> loaded, const QJsonObject& models);

  /// Requests predictions for the tab's current scene. A quick round (refine = false) is
  /// followed, once the user pauses for 300 ms, by a refined one with every metric.
  void schedulePredictions(bool refine);
  /// The serial of the newest request.
  uint64_t serial() const { return m_serial; }
  /// The newest round drawn in full.
  const PredictionResult& lastCompleteRound() const { return m_last_complete; }

  /// The round drawn last (complete): each shown model's prediction time on the worker thread
  /// (ms, by name), when the worker started and how long it took for all models.
  const std::vector<std::pair<QString, double>>& lastRoundTimes() const { return m_round_times; }
  /// Each shown model's work in that round by its own FLOP count (Predictor::prediction_flops
  /// at the context it saw; NaN where unknown), by name.
  const std::vector<std::pair<QString, double>>& lastRoundFlops() const { return m_round_flops; }
  std::chrono::steady_clock::time_point lastRoundStarted() const { return m_round_started; }
  /// When the worker started the round of the delivery drawn last (complete or not).
  std::chrono::steady_clock::time_point lastDeliveryStarted() const { return m_delivery_started; }
  double lastRoundMilliseconds() const {
    return std::chrono::duration<double, std::milli>(m_round_finished - m_round_started).count();
  }

 Q_SIGNALS:
  /// A model new to the list (the 1-D tab offers it in its attention and correlation choices).
  void modelAdded(const QString& id);
  /// A round's predictions (possibly partial: result.complete is false while other models are
  /// still computing; models marked `updating` are their previous predictions) are in the
  /// metrics table; the tab draws them.
  void roundReady(const npe::widgets::PredictionResult& result);
  /// The round is complete and drawn; `timing` is "<model> 12.3 ms, ..." for the status bar.
  void roundComplete(const npe::widgets::PredictionResult& result, const QString& timing);

 private:
  void onPredictions(const PredictionResult& result);
  /// Draws a delivery (the tab's roundReady, the metrics, the timings of a complete round).
  void show(const PredictionResult& delivery);
  QColor nextColour() const;

  ExplorerPanel* m_panel;
  Settings m_settings;
  torch::Device m_device;
  ModelsBox* m_models_box = nullptr;
  ModelList* m_models = nullptr;
  QGroupBox* m_metrics_box = nullptr;
  MetricsTable* m_metrics = nullptr;
  PredictionService* m_service = nullptr;
  QTimer m_refine_timer;
  // Parts of a round drawn at most once per kPartialDrawIntervalMs (see onPredictions).
  static constexpr qint64 kPartialDrawIntervalMs = 33;
  QTimer m_partial_timer;
  QElapsedTimer m_since_draw;
  std::optional<PredictionResult> m_deferred_partial;
  std::function<void(ModelEntry&)> m_decorate;
  std::function<std::optional<PredictionRequest>(bool)> m_scene;
  uint64_t m_serial = 0;
  PredictionResult m_last_complete;
  PredictionResult m_shown;  // what the tab drew last: a delivery with the previous predictions
  std::chrono::steady_clock::time_point m_delivery_started;
  std::chrono::steady_clock::time_point m_round_started, m_round_finished;
  std::vector<std::pair<QString, double>> m_round_times, m_round_flops;
};

}  // namespace npe::widgets
