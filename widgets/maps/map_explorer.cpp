#include "maps/map_explorer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QScopedValueRollback>
#include <QSlider>
#include <QUndoStack>
#include <QVBoxLayout>

#include "common/episode_box.h"
#include "common/explorer_controller.h"
#include "common/export.h"
#include "common/metrics_table.h"
#include "common/model_list.h"
#include "common/models_box.h"
#include "common/shift_control.h"
#include "maps/coastlines.h"
#include "maps/grid_description.h"
#include "maps/map_controls.h"
#include "maps/map_episode.h"
#include "maps/map_layer.h"
#include "maps/map_session.h"
#include "maps/map_view.h"
#include "maps/map_view_area.h"
#include "maps/model_maps.h"
#include "maps/small_maps.h"
#include "maps/station_editor.h"
#include "maps/station_set.h"
#include "maps/station_suggestions.h"
#include "maps/training_data.h"
#include "npe/data/era5_scene.h"
#include "npe/data/gridded_field.h"
#include "npe/errors.h"

namespace npe::widgets {
namespace {

// Shown by default: the translation-equivariant models (BSA-TNP, the best model in both regions,
// and TE-PT-TNP), the plain counterpart and the ConvCNP. Each is drawn as it finishes.
const QStringList kDefaultMapModels = {"shipped:bsatnp", "shipped:tepttnp", "shipped:pttnp",
                                       "shipped:convcnp2d"};
constexpr int kDefaultStations = 30;
}  // namespace

MapExplorer::MapExplorer(QWidget* parent, torch::Device device) : ExplorerPanel(parent) {
  m_stations = new StationSet(this);
  m_undo = new QUndoStack(this);
  ExplorerController::Settings settings;
  settings.task_kinds = {"era5"};
  settings.dim_x = 3;
  settings.model_description = tr("a map model (latitude, longitude, time in; one value out)");
  settings.shipped_folder = "era5";
  settings.default_models = kDefaultMapModels;
  settings.uncoloured_entries = 1;  // the GP baseline
  settings.metrics_help =
      tr("Mean log-likelihood of the true temperature of every non-station cell of the target "
         "window at this hour, in standardised units (higher is better)");
  m_controller = new ExplorerController(this, std::move(settings), device);
  m_controller->setSceneRequest([this](bool) { return sceneRequest(); });
  m_models = m_controller->models();
  m_metrics = m_controller->metrics();
  m_small_maps = new SmallMaps(this);
  m_station_editor = new StationEditor(
      m_stations, m_undo, [this] { return targetWindow(); },
      [this](const QPoint& cell) {
        // Stations only where the data has a value now and the models have place features.
        return !m_source ||
               (m_source->usable_cells()[cell.y()][cell.x()].item<bool>() &&
                std::isfinite(m_source->field().values[m_hour][cell.y()][cell.x()].item<float>()));
      },
      this);
  connect(m_station_editor, &StationEditor::hint, this, &MapExplorer::statusMessage);

  auto* controls = new MapControls(dataSuffixes(), kDefaultStations, this);
  controls->addGroup(m_controller->modelsBox());
  m_suggestions = new StationSuggestions(
      m_controller->service(), m_models, [this] { return sceneRequest(); },
      [this] { return targetWindow(); }, [this](const QPoint& cell) { return freeCell(cell); },
      [this] { return m_source ? m_source->config().stddev : 1.0; }, this);
  controls->addGroup(m_suggestions);
  EpisodeWording wording;
  wording.box_tip =
      tr("An episode: the data at this hour is hidden, and each observation is a new station at "
         "the cell a strategy chooses, reading the data plus noise (σ = a tenth of the data's "
         "standard deviation). The plot tracks the shown models' error on the window's other "
         "cells as stations are added; Replay runs another strategy from the same stations, "
         "with the same noise");
  wording.strategy_tips = {
      tr("Observe at the best cell of \"Suggest stations\" (its model and score; one station "
         "is placed at a time)"),
      tr("Observe where the GP fitted to the stations is least certain: classical uncertainty "
         "sampling"),
      tr("Observe at a random free cell of the window (the same cells on a replay)"),
      tr("Click a cell of the target window: a station reports the truth there")};
  wording.rmse_unit = "K";
  m_episode_box = new EpisodeBox(wording, this);
  controls->addGroup(m_episode_box);
  MapEpisodeHooks hooks;
  hooks.observable = [this](const QPoint& cell) { return freeCell(cell); };
  hooks.window = [this] { return m_source ? targetWindow() : QRect(); };
  hooks.hour = [this] { return m_hour; };
  hooks.data_stddev = [this] { return m_source ? m_source->config().stddev : 0.0; };
  hooks.readings = [this] { return m_source ? int(m_source->window_time_steps()) : 1; };
  hooks.hide_truth = [this](bool hidden) { setTruthHidden(hidden); };
  m_episode_runner = new MapEpisodeRunner(m_episode_box, m_stations, m_controller, m_suggestions,
                                          std::move(hooks), this);
  connect(m_episode_runner, &MapEpisodeRunner::statusMessage, this, &MapExplorer::statusMessage);
  connect(m_episode_runner, &MapEpisodeRunner::started, this,
          [this] { scrollControlsTo(m_episode_box); });
  m_station_editor->setClickFilter(
      [this](const QPoint& cell) { return m_episode_runner->takeClick(cell); });
  connect(m_suggestions, &StationSuggestions::statusMessage, this, &MapExplorer::statusMessage);
  connect(m_suggestions, &StationSuggestions::finished, this, &ExplorerPanel::extrasDone);
  connect(m_suggestions, &StationSuggestions::placeRequested, this,
          [this](const std::vector<QPoint>& cells, const QString& text) {
            auto after = m_stations->cells();
            after.insert(after.end(), cells.begin(), cells.end());
            m_undo->push(new EditStationsCommand(m_stations, std::move(after), text));
          });
  connect(m_suggestions, &StationSuggestions::proposalsChanged, this, [this] {
    rebuildLayerChoices();
    const auto model = m_suggestions->proposalModel();
    if (!model.isEmpty()) {
      setLayer(model + "|acquisition");
    } else if (m_layer.endsWith("|acquisition")) {
      setLayer("truth");
    } else {
      redraw();
    }
  });
  m_data_label = controls->dataLabel();
  m_controls = controls;
  m_time = controls->time();
  m_time_label = controls->timeLabel();
  m_station_note = controls->stationNote();
  m_shift = controls->shift();
  m_layers = controls->layers();
  m_three_d_box = controls->threeD();
  connect(controls, &MapControls::variableChosen, this, [this](const QString& name) {
    reportErrors(tr("Could not read the variable"), [&] { chooseVariable(name); });
    if (m_source)
      m_controls->showVariables(m_source->field().file_variables, m_source->field().variable);
  });
  connect(controls, &MapControls::openRequested, this, [this](const QString& path) {
    reportErrors(tr("Could not open data"), [&] { openDataFile(path); });
  });
  connect(controls, &MapControls::hourChosen, this, &MapExplorer::setHour);
  connect(controls, &MapControls::playToggled, this, [this](bool on) {
    if (on) {
      m_play_timer.start();
    } else {
      m_play_timer.stop();
    }
  });
  connect(controls, &MapControls::randomStationsRequested, this, &MapExplorer::randomStations);
  connect(controls, &MapControls::clearStationsRequested, this,
          [this] { m_undo->push(new EditStationsCommand(m_stations, {}, tr("Clear stations"))); });
  connect(controls, &MapControls::shiftChosen, this, &MapExplorer::setShift);
  connect(controls, &MapControls::layerChosen, this, &MapExplorer::setLayer);
  connect(controls, &MapControls::threeDToggled, this, &MapExplorer::setThreeD);
  connect(m_models, &ModelList::modelToggled, this, [this] {
    rebuildLayerChoices();
    schedulePredictions(false);
  });
  m_view_area = new MapViewArea(this);
  connect(m_view_area, &MapViewArea::viewCreated, this, [this](MapView* view) {
    m_station_editor->attach(view);
    connect(view, &MapView::hovered, this, [this](QPoint cell) {
      if (cell.x() < 0 || !m_source) return;
      const bool station = m_stations->contains(cell - targetWindow().topLeft());
      m_view_area->setHoverText(
          describe_cell(frame(), m_last, *m_models, cell, station, m_truth_hidden));
    });
    view->setThreeD(m_three_d);
    redraw();
  });
  // The big map takes the tab's full height; the small maps (a row per model) and the metrics
  // form a column beside it, so at 1920 x 1080 the map fills over half the tab and the held-out
  // log-likelihoods are visible without scrolling the controls.
  // (A column inside the view's own widget instead of a splitter pane left the VTK view's
  // framebuffer unpainted in grabs under Xvfb: keep the view alone in its pane.)
  auto* results = new QWidget(this);
  auto* results_layout = new QVBoxLayout(results);
  results_layout->addWidget(m_small_maps, 1);
  results_layout->addWidget(m_controller->metricsBox());
  layOutViewAndControls(m_view_area, controls, 340, results);

  connect(m_stations, &StationSet::changed, this, [this] {
    m_suggestions->withdraw();
    redraw();
    schedulePredictions(false);
  });
  connect(m_controller, &ExplorerController::roundReady, this, &MapExplorer::onPredictions);
  connect(m_controller, &ExplorerController::modelAdded, this, [this](const QString& id) {
    if (const auto* entry = m_models->find(id)) m_suggestions->addModel(entry->name, id);
    // The tab's best model proposes by default (BSA-TNP: above the fitted GP in both regions).
    if (id == "shipped:bsatnp") m_suggestions->setModel(id);
    rebuildLayerChoices();
    // A model trained on a grid of the user's brings its data (a session names its own).
    if (const auto* entry = m_models->find(id); entry && !m_applying_session) offerDataOf(*entry);
  });
  connect(m_controller, &ExplorerController::roundComplete, this,
          [this](const PredictionResult&, const QString& timing) {
            Q_EMIT statusMessage(tr("%1 stations · Δ = (%2 N, %3 E) cells · %4")
                                     .arg(m_stations->count())
                                     .arg(m_north)
                                     .arg(m_east)
                                     .arg(timing));
          });
  m_play_timer.setInterval(500);
  connect(&m_play_timer, &QTimer::timeout, this,
          [this] { setHour(m_hour + 1 > m_time->maximum() ? m_time->minimum() : m_hour + 1); });

  m_models->add(baseline_entry("gp-se-ard", 40, 300, 1000), false);
  m_controller->addShippedModels();
  m_training = load_training_data(m_models->entries());
  if (m_training.source) {
    setSource(std::move(m_training.source));
  } else {
    m_data_label->setText(
        tr("No ERA5 data: %1. Open a NetCDF or GRIB file.").arg(m_training.error));
  }
  randomStations(kDefaultStations);
  m_undo->clear();
}

MapExplorer::~MapExplorer() = default;

QString MapExplorer::unavailableReason() const {
  return m_source ? QString() : m_data_label->text();
}

MapView* MapExplorer::view() {
  return m_view_area->view();
}

void MapExplorer::setSource(std::shared_ptr<Era5TaskSource> source) {
  const bool same_grid = m_source && m_source->field().latitudes == source->field().latitudes &&
                         m_source->field().longitudes == source->field().longitudes;
  m_source = std::move(source);
  m_episode_runner->sceneChanged();
  const auto& f = m_source->field();
  const int rows = static_cast<int>(f.num_latitudes()), cols = static_cast<int>(f.num_longitudes());
  const int w = static_cast<int>(m_source->config().window);
  const int first = static_cast<int>((m_source->window_time_steps() - 1) * m_source->time_stride());
  if (!same_grid && m_source->config().whole_file) {
    // Another grid: the window starts, unshifted, over the models' training region when the
    // grid covers it (a global file: where the models know the places), else in its middle.
    m_base_row = (rows - w) / 2;
    m_base_col = (cols - w) / 2;
    if (m_training.region) {
      const double lat = 0.5 * (m_training.region->south + m_training.region->north);
      const double lon = 0.5 * (m_training.region->west + m_training.region->east);
      const auto [lat_low, lat_high] = std::minmax(f.latitudes.front(), f.latitudes.back());
      const auto [lon_low, lon_high] = std::minmax(f.longitudes.front(), f.longitudes.back());
      if (lat >= lat_low && lat <= lat_high && lon >= lon_low && lon <= lon_high) {
        auto nearest = [](const std::vector<double>& axis, double value) {
          int best = 0;
          for (int i = 1; i < static_cast<int>(axis.size()); ++i)
            if (std::abs(axis[size_t(i)] - value) < std::abs(axis[size_t(best)] - value)) best = i;
          return best;
        };
        m_base_row = nearest(f.latitudes, lat) - w / 2;
        m_base_col = nearest(f.longitudes, lon) - w / 2;
      }
    }
    m_north = m_east = 0;
  }
  m_base_row = std::clamp(m_base_row, 0, rows - w);
  m_base_col = std::clamp(m_base_col, 0, cols - w);
  m_shift->setLimit(std::max(rows, cols) - w);
  if (!same_grid || !m_coastlines) {
    const auto [lat_low, lat_high] = std::minmax(f.latitudes.front(), f.latitudes.back());
    const auto [lon_low, lon_high] = std::minmax(f.longitudes.front(), f.longitudes.back());
    try {
      m_coastlines = load_coastlines(lat_low - 1.0, lat_high + 1.0, lon_low - 1.0, lon_high + 1.0);
    } catch (const Error& e) {
      m_coastlines.reset();
      Q_EMIT statusMessage(QString::fromUtf8(e.what()));
    }
  }
  {
    QSignalBlocker block(m_time);
    m_time->setRange(first, static_cast<int>(f.num_times()) - 1);
  }
  const bool other_file = m_source->config().whole_file && m_training.region;
  m_data_label->setText(describe_field(f) +
                        (other_file ? describe_training_region(f, *m_training.region) : QString()));
  m_controls->showVariables(f.file_variables, f.variable);
  m_station_note->setText(
      describe_station_reports(m_source->window_time_steps(), m_source->config().step_hours));
  // Start on a test day (one the models did not train on), at noon.
  const auto& test_starts = m_source->window_starts(Split::Test);
  const int test_hour = test_starts.empty() ? 0 : static_cast<int>(test_starts.front()) + first;
  setHour(std::clamp(test_hour + 12, m_time->minimum(), m_time->maximum()));
  setShift(m_north, m_east);
  updateTimeLabel();
  redraw();
  schedulePredictions(false);
}

bool MapExplorer::offerDataOf(const ModelEntry& entry) {
  std::optional<TrainingData> own;
  try {
    own = own_training_data(entry);
  } catch (const Error& e) {
    Q_EMIT statusMessage(tr("%1 was trained on a grid of its own, but it could not be read: %2")
                             .arg(entry.name, QString::fromUtf8(e.what())));
    return false;
  }
  if (!own || (m_source && !m_source->config().whole_file &&
               m_source->config().reads(own->source->config().data))) {
    return false;
  }
  m_training = std::move(*own);
  setSource(std::move(m_training.source));
  m_models->select(entry.id);
  Q_EMIT statusMessage(tr("Showing the data of %1: %2")
                           .arg(entry.name, QString::fromStdString(m_source->describe())));
  return true;
}

void MapExplorer::setVariable(const QString& name) {
  m_next_variable = name.trimmed();
}

void MapExplorer::openDataFile(const QString& path) {
  // The models' statistics and units; a file other than the training file is shown whole.
  // A file some model trained on is read as it saw it; any other with the current settings.
  auto training = training_for(path.toStdString(), m_models->entries(), m_training);
  auto source = std::make_shared<Era5TaskSource>(  // throws before anything changes
      training.config_for(path.toStdString(), m_next_variable.toStdString()));
  m_next_variable.clear();
  m_training = std::move(training);
  setSource(std::move(source));
  const auto choice = describe_variable_choice(m_source->field());
  Q_EMIT statusMessage(choice.empty()
                           ? tr("Opened %1").arg(path)
                           : tr("Opened %1: %2").arg(path, QString::fromStdString(choice)));
}

const QComboBox* MapExplorer::variableList() const {
  return m_controls->variableList();
}

void MapExplorer::chooseVariable(const QString& name) {
  if (!m_source || name.toStdString() == m_source->field().variable) return;
  const auto path = m_source->field().source;
  auto source = std::make_shared<Era5TaskSource>(  // throws before anything changes
      m_training.config_for(path.string(), name.toStdString()));
  setSource(std::move(source));
  Q_EMIT statusMessage(tr("Read %1 of %2").arg(name, QString::fromStdString(path.string())));
}

QRect MapExplorer::targetWindow() const {
  const int w = m_source ? static_cast<int>(m_source->config().window) : 15;
  return {m_base_col + m_east, m_base_row - m_north, w, w};
}

void MapExplorer::setHour(int index) {
  if (!m_source) return;
  index = std::clamp(index, m_time->minimum(), m_time->maximum());
  {
    QSignalBlocker block(m_time);
    m_time->setValue(index);
  }
  if (index == m_hour && m_last.serial != 0) return;
  m_hour = index;
  m_episode_runner->sceneChanged();
  m_suggestions->withdraw();
  updateTimeLabel();
  redraw();
  schedulePredictions(false);
}

void MapExplorer::updateTimeLabel() {
  if (!m_source) return;
  const auto& f = m_source->field();
  const auto* block = m_source->block_at(m_hour);
  const QString period = m_source->config().whole_file            ? tr("not a training file")
                         : !block                                 ? QString()
                         : block->use == Era5BlockUse::Train      ? tr("training days")
                         : block->use == Era5BlockUse::Validation ? tr("validation days")
                                                                  : tr("test days");
  m_time_label->setText(tr("%1 (hour %2, %3)")
                            .arg(QString::fromStdString(format_utc(f.valid_times[m_hour])))
                            .arg(m_hour)
                            .arg(period));
}

void MapExplorer::setShift(int north, int east) {
  if (!m_source) return;
  const auto& f = m_source->field();
  const int w = static_cast<int>(m_source->config().window);
  north = std::clamp(north, m_base_row - (static_cast<int>(f.num_latitudes()) - w), m_base_row);
  east = std::clamp(east, -m_base_col, static_cast<int>(f.num_longitudes()) - w - m_base_col);
  m_shift->setValue({double(north), double(east)});
  if (north == m_north && east == m_east) return;
  m_north = north;
  m_east = east;
  m_episode_runner->sceneChanged();
  m_suggestions->withdraw();
  redraw();
  schedulePredictions(false);
}

void MapExplorer::setThreeD(bool on) {
  if (m_three_d_box->isChecked() != on) {
    QSignalBlocker block(m_three_d_box);
    m_three_d_box->setChecked(on);
  }
  m_three_d = on;
  if (auto* view = m_view_area->existingView()) view->setThreeD(on);
  redraw();
}

void MapExplorer::setLayer(const QString& layer) {
  m_layer = layer;
  const int i = m_layers->findData(layer);
  if (i >= 0) m_layers->setCurrentIndex(i);
  redraw();
}

void MapExplorer::setModelEnabled(const QString& id, bool enabled) {
  m_models->setEnabled(id, enabled);
}

MapFrame MapExplorer::frame() const {
  return {*m_source, targetWindow(), m_hour};
}

bool MapExplorer::freeCell(const QPoint& window_cell) const {
  const QPoint absolute = targetWindow().topLeft() + window_cell;
  return m_source && targetWindow().contains(absolute) && !m_stations->contains(window_cell) &&
         m_source->usable_cells()[absolute.y()][absolute.x()].item<bool>() &&
         std::isfinite(m_source->field().values[m_hour][absolute.y()][absolute.x()].item<float>());
}

void MapExplorer::setTruthHidden(bool hidden) {
  if (hidden == m_truth_hidden) return;
  m_truth_hidden = hidden;
  rebuildLayerChoices();
  if (!hidden) {
    setLayer("truth");  // the reveal
  } else {
    redraw();
  }
  rebuildSmallMaps();
}

QString MapExplorer::shownLayer() const {
  if (!m_truth_hidden || !(m_layer == "truth" || m_layer.endsWith("|error"))) return m_layer;
  const auto shown = m_models->enabledEntries();
  return shown.empty() ? QString() : shown.front().id + "|mean";
}

void MapExplorer::schedulePredictions(bool refine) {
  m_controller->schedulePredictions(refine);
}

std::optional<PredictionRequest> MapExplorer::sceneRequest() const {
  if (!m_source) return std::nullopt;
  const auto window = targetWindow();
  Era5Scene scene;
  scene.hour = m_hour;
  scene.top = window.top();
  scene.left = window.left();
  scene.width = window.width();
  for (const auto& s : m_stations->cells()) scene.stations.emplace_back(s.y(), s.x());
  scene.noise = m_episode_runner->stationNoise(m_stations->cells());
  auto built = scene_task(*m_source, scene);
  PredictionRequest request;
  request.shift = Translation(static_cast<size_t>(m_source->dim_x()), 0.0);
  request.shift[0] = m_north;
  request.shift[1] = m_east;
  request.place_features = m_source->place_features().count();
  request.batch.task = std::move(built.task);
  request.held_out_index = built.held_out_index;
  request.held_out_index_y = built.held_out_y;
  return request;
}

void MapExplorer::onPredictions(const PredictionResult& result) {
  m_last = result;
  rebuildLayerChoices();
  redraw();
  rebuildSmallMaps();
}

QString MapExplorer::shownName(const ModelEntry& entry) const {
  for (const auto& p : m_last.models) {
    if (p.id == entry.id && p.updating) return tr("%1 (updating…)").arg(entry.name);
  }
  return entry.name;
}

QStringList MapExplorer::dataSuffixes() const {
  QStringList suffixes;
  for (const auto& suffix : gridded_suffixes()) suffixes << QString::fromStdString(suffix);
  return suffixes;
}

PointTable MapExplorer::predictionTable() const {
  return m_source ? map_prediction_table(frame(), m_last, *m_models) : PointTable{};
}

void MapExplorer::rebuildLayerChoices() {
  // While an episode hides the truth, neither it nor the errors (which show it) are offered.
  std::vector<std::pair<QString, QString>> choices;
  if (!m_truth_hidden) choices.emplace_back(tr("Truth"), QString("truth"));
  for (const auto& e : m_models->enabledEntries()) {
    choices.emplace_back(tr("%1 · mean").arg(e.name), e.id + "|mean");
    choices.emplace_back(tr("%1 · standard deviation").arg(e.name), e.id + "|stddev");
    if (!m_truth_hidden) {
      choices.emplace_back(tr("%1 · error (mean − truth)").arg(e.name), e.id + "|error");
    }
    if (e.id == m_suggestions->proposalModel()) {
      choices.emplace_back(tr("%1 · where to observe next").arg(e.name), e.id + "|acquisition");
    }
  }
  // Every delivery of predictions asks; the list changes only with the models switched on.
  bool same = m_layers->count() == int(choices.size());
  for (int i = 0; same && i < m_layers->count(); ++i) {
    same = m_layers->itemText(i) == choices[size_t(i)].first &&
           m_layers->itemData(i).toString() == choices[size_t(i)].second;
  }
  QSignalBlocker block(m_layers);
  if (!same) {
    m_layers->clear();
    for (const auto& [text, id] : choices) m_layers->addItem(text, id);
  }
  const int i = m_layers->findData(shownLayer());
  m_layers->setCurrentIndex(std::max(0, i));
}

void MapExplorer::redraw() {
  if (!m_source) return;
  const auto& f = m_source->field();
  const auto window = targetWindow();
  MapScene scene;
  scene.latitudes = f.latitudes;
  scene.longitudes = f.longitudes;
  scene.coastlines = m_coastlines;
  scene.target_window = window;
  scene.training_region = m_training.region_cells(m_source->field());
  const auto truth = truth_celsius(frame());
  const auto bar = shownLayer().split('|');
  const auto* entry = bar.size() == 2 ? m_models->find(bar[0]) : nullptr;
  std::optional<ModelLayer> layer;
  if (entry) {
    layer = ModelLayer{shownName(*entry), bar[1], {}, {}, {}};
    if (bar[1] == "acquisition" && entry->id != m_suggestions->proposalModel()) {
      layer.reset();  // a session's layer of proposals that are gone: the truth
    } else if (bar[1] == "acquisition") {
      layer->mean = m_suggestions->scoreMap();
      layer->unit = m_suggestions->scoreTitle();
    } else {
      std::tie(layer->mean, layer->stddev) = model_maps(frame(), m_last, entry->id);
    }
  }
  const auto truth_title = f.long_name.empty() ? f.variable : f.long_name;
  if (m_truth_hidden && !layer) {
    // No model shown to draw instead: the window's truth is masked out.
    using torch::indexing::Slice;
    auto masked = truth.clone();
    masked.index_put_(
        {Slice(window.top(), window.bottom() + 1), Slice(window.left(), window.right() + 1)},
        std::numeric_limits<double>::quiet_NaN());
    set_layer(scene, masked, QString::fromStdString(truth_title), window, nullptr);
  } else {
    set_layer(scene, truth, QString::fromStdString(truth_title), window, layer ? &*layer : nullptr);
  }
  const QString when = QString::fromStdString(format_utc(f.valid_times[m_hour]));
  scene.title += " · " + when + (m_three_d ? tr(" · height = value") : QString());
  for (const auto& s : m_stations->cells()) {
    const int r = window.top() + s.y(), c = window.left() + s.x();
    scene.stations.push_back({r, c, truth[r][c].item<double>()});
  }
  if (const auto* proposer = m_models->find(m_suggestions->proposalModel())) {
    int rank = 0;
    for (const auto& p : m_suggestions->proposals()) {
      const int r = window.top() + p.y(), c = window.left() + p.x();
      scene.proposals.push_back({r, c, ++rank, proposer->colour, truth[r][c].item<double>()});
    }
  }
  if (auto* view = m_view_area->existingView()) view->setScene(std::move(scene));
}

void MapExplorer::rebuildSmallMaps() {
  if (!m_source) {
    m_small_maps->show({}, {});
    return;
  }
  const auto window = targetWindow();
  using torch::indexing::Slice;
  const auto truth = truth_celsius(frame()).index(
      {Slice(window.top(), window.bottom() + 1), Slice(window.left(), window.right() + 1)});
  std::vector<SmallMaps::Model> shown;
  for (const auto& e : m_models->enabledEntries()) {
    auto [mean, sd] = model_maps(frame(), m_last, e.id);
    if (mean.defined()) shown.push_back({shownName(e), mean, sd});
  }
  m_small_maps->show(truth, shown, m_truth_hidden);
}

QJsonObject MapExplorer::saveSection() const {
  MapSession session;
  if (m_source && !m_source->config().data.empty()) {
    session.data = QString::fromStdString(m_source->config().data.string());
    session.variable = QString::fromStdString(m_source->config().variable);
  }
  session.stations = m_stations->cells();
  session.hour = m_hour;
  session.north = m_north;
  session.east = m_east;
  session.layer = m_layer;
  session.three_d = m_three_d;
  if (!m_suggestions->proposalModel().isEmpty()) {
    session.suggestion_model = m_suggestions->proposalModel();
    session.suggestion_count = m_suggestions->count();
  }
  session.models = m_controller->sessionModels();
  session.episode = m_episode_runner->episode();
  session.episode_strategy = strategy_id(m_episode_box->strategy());
  session.episode_plots_ll = m_episode_box->showsLogLikelihood();
  return session.to_json();
}

void MapExplorer::restoreSection(const QJsonObject& section) {
  // Validate and load everything first: on any error nothing has changed.
  const auto session = MapSession::from_json(section);
  auto loaded = m_controller->loadSessionModels(session.models);
  auto source = m_source;
  auto training = m_training;
  if (!session.data.isEmpty()) {
    // Read as the models that trained on it saw it (a grid of the user's: its model's settings).
    training = training_for(session.data.toStdString(), loaded, m_training);
    source = std::make_shared<Era5TaskSource>(
        training.config_for(session.data.toStdString(), session.variable.toStdString()));
  }
  if (!source) throw DataError("maps: no data to show");
  session.check(static_cast<int>(source->config().window), source->field().num_times());
  {
    const QScopedValueRollback<bool> applying(m_applying_session, true);
    m_controller->applySessionModels(std::move(loaded), session.models);
  }
  m_training = std::move(training);
  if (source != m_source) setSource(source);
  {
    QSignalBlocker block(m_stations);
    m_stations->replace(session.stations);
  }
  m_undo->clear();
  setShift(session.north, session.east);
  setHour(session.hour);
  setThreeD(session.three_d);
  {
    const QSignalBlocker block(m_episode_box);  // its strategy would switch the stations
    m_episode_box->setStrategy(strategy_from_id(session.episode_strategy));
    m_episode_box->setShowsLogLikelihood(session.episode_plots_ll);
  }
  m_episode_runner->restore(session.episode);
  rebuildLayerChoices();
  setLayer(session.layer);
  redraw();
  schedulePredictions(false);
  if (!session.suggestion_model.isEmpty()) {
    m_suggestions->setModel(session.suggestion_model);
    m_suggestions->setCount(session.suggestion_count);
    m_suggestions->suggest();  // after the predictions: they go first
  }
}

bool MapExplorer::extrasPending() const {
  return m_suggestions->running() || m_episode_runner->pending() > 0;
}

void MapExplorer::exportView(const QString& path) {
  m_view_area->view();
  export_widget(m_view_area, path);
}

bool MapExplorer::makeProbeEdit(int index) {
  // Toggle a station near the window's centre, as one click would.
  const auto window = targetWindow();
  const QPoint cell(window.left() + 4 + index % 7, window.top() + 4 + (index / 7) % 7);
  return clickCell(cell);
}

void MapExplorer::repaintNow() {
  m_view_area->repaint();
}

}  // namespace npe::widgets
