#include "common/explorer_controller.h"

#include <QFileInfo>
#include <QGroupBox>
#include <QVBoxLayout>

#include "common/explorer_panel.h"
#include "common/metrics_table.h"
#include "common/model_list.h"
#include "common/models_box.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/predictor_registry.h"

namespace npe::widgets {

ExplorerController::ExplorerController(ExplorerPanel* panel, Settings settings,
                                       torch::Device device)
    : QObject(panel), m_panel(panel), m_settings(std::move(settings)), m_device(device) {
  m_service = new PredictionService(this);
  m_models_box = new ModelsBox(panel);
  m_models = m_models_box->list();
  m_metrics_box = new QGroupBox(tr("Metrics"), panel);
  auto* metrics_layout = new QVBoxLayout(m_metrics_box);
  m_metrics = new MetricsTable(m_settings.metrics_help, m_metrics_box);
  metrics_layout->addWidget(m_metrics);

  connect(m_models_box, &ModelsBox::checkpointChosen, this, [this](const QString& path) {
    m_panel->reportErrors(tr("Could not open checkpoint"), [&] { openCheckpoint(path); });
  });
  connect(m_service, &PredictionService::predictionsReady, this,
          &ExplorerController::onPredictions);
  connect(m_service, &PredictionService::modelStarted, this,
          [this](const QString& id, uint64_t) { m_metrics->markComputing(id); });
  // Settle-time refinement: full fitted-GP iterations and the equivariance metric run once the
  // user pauses, so dragging stays fluid.
  m_refine_timer.setSingleShot(true);
  m_refine_timer.setInterval(300);
  connect(&m_refine_timer, &QTimer::timeout, this, [this] { schedulePredictions(true); });
  m_partial_timer.setSingleShot(true);
  connect(&m_partial_timer, &QTimer::timeout, this, [this] {
    if (!m_deferred_partial) return;
    auto partial = std::move(*m_deferred_partial);
    m_deferred_partial.reset();
    show(partial);
  });
  panel->setController(this);
}

ExplorerController::~ExplorerController() = default;

void ExplorerController::setEntryDecorator(std::function<void(ModelEntry&)> decorate) {
  m_decorate = std::move(decorate);
}

void ExplorerController::setSceneRequest(
    std::function<std::optional<PredictionRequest>(bool)> scene) {
  m_scene = std::move(scene);
}

QString ExplorerController::addModel(ModelEntry entry, bool enabled) {
  if (m_decorate) m_decorate(entry);
  const auto count = m_models->count();
  const auto id = m_models->add(std::move(entry), enabled);
  if (m_models->count() > count) Q_EMIT modelAdded(id);
  return id;
}

QColor ExplorerController::nextColour() const {
  return model_colour(static_cast<int>(m_models->entries().size()) - m_settings.uncoloured_entries);
}

void ExplorerController::addShippedModels() {
  const int first_colour =
      static_cast<int>(m_models->entries().size()) - m_settings.uncoloured_entries;
  for (auto& entry : shipped_entries(m_settings.shipped_folder, first_colour, m_device)) {
    const bool on = m_settings.default_models.contains(entry.id);
    addModel(std::move(entry), on);
  }
}

bool ExplorerController::accepts(const CheckpointMetadata& metadata) const {
  return checkpoint_fits_tab(metadata, m_settings.task_kinds, m_settings.dim_x, m_settings.dim_y);
}

void ExplorerController::openCheckpoint(const QString& path) {
  const auto absolute = QFileInfo(path).absoluteFilePath();
  if (!accepts(read_model_metadata(absolute.toStdString()))) {
    throw CheckpointError(
        ("'" + absolute + "' is not " + m_settings.model_description).toStdString());
  }
  addModel(load_model_entry(absolute, nextColour(), m_device), true);
  schedulePredictions(false);
}

QJsonObject ExplorerController::sessionModels() const {
  return m_models->sessionModels();
}

std::vector<ModelEntry> ExplorerController::loadSessionModels(const QJsonObject& models) const {
  return m_models->loadMissing(ModelList::sessionCheckpoints(models), m_device);
}

void ExplorerController::applySessionModels(std::vector<ModelEntry> loaded,
                                            const QJsonObject& models) {
  for (auto& entry : loaded) addModel(std::move(entry), false);
  m_models->setEnabledIds(ModelList::sessionEnabledIds(models));
}

void ExplorerController::schedulePredictions(bool refine) {
  if (!m_scene) return;
  auto request = m_scene(refine);
  if (!request) return;
  request->serial = ++m_serial;
  request->refine = refine;
  request->models = m_models->enabledEntries();
  m_service->request(std::move(*request));
  if (!refine) m_refine_timer.start();
}

void ExplorerController::onPredictions(const PredictionResult& delivery) {
  // Part of a round is drawn at most once a frame: every draw takes the GUI thread (the map view
  // 28 ms at 1600 x 1000 under Xvfb) and a core from the models. A newer part replaces one
  // waiting; the complete round is drawn at once.
  if (!delivery.complete && m_since_draw.isValid() &&
      m_since_draw.elapsed() < kPartialDrawIntervalMs) {
    m_deferred_partial = delivery;
    if (!m_partial_timer.isActive()) {
      m_partial_timer.start(int(kPartialDrawIntervalMs - m_since_draw.elapsed()));
    }
    return;
  }
  if (delivery.complete) {
    m_partial_timer.stop();
    m_deferred_partial.reset();
  }
  show(delivery);
}

void ExplorerController::show(const PredictionResult& delivery) {
  m_since_draw.start();
  // Models not done yet keep their last prediction on screen, marked as updating.
  auto result = with_previous_predictions(delivery, m_shown);
  m_shown = result;
  m_delivery_started = delivery.started;
  m_metrics->showResult(result, *m_models);
  Q_EMIT roundReady(result);
  if (!delivery.complete) {  // the other models of this round are still computing
    m_panel->partialRoundDrawn();
    return;
  }
  m_last_complete = delivery;
  QStringList timing;
  m_round_times.clear();
  m_round_flops.clear();
  for (const auto& p : delivery.models) {
    if (const auto* entry = m_models->find(p.id); entry && p.error.isEmpty()) {
      const double ms = p.milliseconds + p.sample_milliseconds;
      const auto subset = p.subsetNote();  // "on N of M points" when it saw a subset
      timing << QString("%1 %2 ms%3")
                    .arg(entry->name)
                    .arg(ms, 0, 'f', 1)
                    .arg(subset.isEmpty() ? QString() : QString(" (%1)").arg(subset));
      m_round_times.emplace_back(entry->name, ms);
      m_round_flops.emplace_back(entry->name, p.context.flops);
    }
  }
  m_round_started = delivery.started;
  m_round_finished = delivery.finished;
  Q_EMIT roundComplete(result, timing.join(", "));
  m_panel->roundDrawn(result.refine, result.pending.empty());
}

}  // namespace npe::widgets
