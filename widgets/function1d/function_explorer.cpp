#include "function_explorer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QScopedValueRollback>
#include <QVBoxLayout>

#include "common/episode_box.h"
#include "common/explorer_controller.h"
#include "common/metrics_table.h"
#include "common/model_list.h"
#include "common/models_box.h"
#include "common/shift_control.h"
#include "function1d/attention_probe.h"
#include "function1d/bands_choice.h"
#include "function1d/context_editor.h"
#include "function1d/correlation_overlay.h"
#include "function1d/episode_runner.h"
#include "function1d/function_table.h"
#include "function1d/gp_baselines.h"
#include "function1d/ground_truth_box.h"
#include "function1d/kernel_posterior_box.h"
#include "function1d/model_presets.h"
#include "function1d/observation_suggester.h"
#include "function1d/point_import.h"
#include "function1d/round_drawing.h"
#include "function1d/samples_box.h"
#include "function1d/series_truth.h"
#include "function1d/suggestion_box.h"
#include "function1d/teaching_aids_box.h"
#include "function_plot.h"
#include "npe/data/function_scene.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "npe/runtime.h"
#include "point_set.h"
#include "sweep_dialog.h"

namespace npe::widgets {
namespace {

// The slider covers the interesting range; larger shifts (up to kMaxShift) are typed.
constexpr double kSliderShift = 10.0;
constexpr double kTrainingContextLow = -2.0, kTrainingContextHigh = 2.0;
constexpr double kTargetLow = -3.0, kTargetHigh = 3.0;
// Shown by default: the models the teaching story compares, each tab's best translation-
// equivariant model among them: the paper-size TE-TNP (0.165 nats below the Gaussian ceiling on
// 4,096 tasks, the small one 0.172, ConvCNP 0.168; BENCHMARKS.md). The small TE-TNP stays in the
// list.
const QStringList kDefaultFunctionModels = {"shipped:tnp", "shipped:tetnp-paper",
                                            "shipped:convcnp"};

}  // namespace

FunctionExplorer::FunctionExplorer(QWidget* parent, torch::Device device)
    : ExplorerPanel(parent), m_device(device) {
  m_context = new ContextEditor(this);
  ExplorerController::Settings settings;
  // Models of the user's series too: they bring their data (offerSeriesOf).
  settings.task_kinds = {"gp1d", "series"};
  settings.model_description = tr("a 1-D model (one input, one output)");
  settings.shipped_folder = "gp1d";
  settings.default_models = kDefaultFunctionModels;
  settings.metrics_help =
      tr("Mean log-likelihood of 100 held-out noisy points of the true function in the target "
         "window (higher is better)");
  m_controller = new ExplorerController(this, std::move(settings), device);
  m_controller->setSceneRequest([this](bool refine) { return sceneRequest(refine); });
  m_model_list = m_controller->models();
  m_plot = new FunctionPlot(this);
  m_correlation = std::make_unique<CorrelationOverlay>(m_plot);

  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(m_plot, 1);
  left_layout->addWidget(buildShiftBar());

  layOutViewAndControls(left, buildSidePanel(), 340);

  // A click adds a context point, unless an episode observes where the user clicks.
  connect(m_plot, &FunctionPlot::addRequested, this, [this](QPointF point) {
    if (!m_episode_runner->takeClick(point.x())) m_context->add(point);
  });
  connect(m_plot, &FunctionPlot::moveRequested, m_context, &ContextEditor::move);
  connect(m_plot, &FunctionPlot::removeRequested, m_context, &ContextEditor::remove);
  connect(m_plot, &FunctionPlot::hovered, this, &FunctionExplorer::onHovered);
  connect(m_plot, &FunctionPlot::hoverEnded, this, [this] {
    m_correlation->hover(std::numeric_limits<double>::quiet_NaN());
    m_plot->clearCorrelation();
  });
  connect(m_plot, &FunctionPlot::viewChangedByUser, this, [this] {
    m_user_view = true;
    m_view_timer.start();
  });
  connect(m_context->points(), &PointSet::changed, this, [this] {
    redrawData();
    schedulePredictions(false);
  });
  connect(m_controller, &ExplorerController::roundReady, this, &FunctionExplorer::onPredictions);
  connect(
      m_controller, &ExplorerController::roundComplete, this,
      [this](const PredictionResult&, const QString& timing) {
        Q_EMIT statusMessage(tr("Models run on %1 · last prediction: %2")
                                 .arg(QString::fromStdString(describe_device(m_device)), timing));
        // The suggestion follows the data and the view, after the predictions they asked for.
        if (!m_suggestion_box->model().isEmpty()) m_suggester->refresh();
      });
  connect(m_controller, &ExplorerController::modelAdded, this, &FunctionExplorer::onModelAdded);
  auto* service = m_controller->service();
  m_attention = new AttentionProbe(m_plot, service, m_model_list, m_aids, this);
  m_suggester = new ObservationSuggester(
      m_plot, service, m_model_list, m_suggestion_box, [this] { return scene(); }, this);
  connect(m_suggester, &ObservationSuggester::addRequested, m_context, &ContextEditor::add);
  m_episode_runner = new EpisodeRunner(m_episode_box, m_context, m_truth_box, m_controller,
                                       m_suggester, m_suggestion_box, this);
  connect(m_episode_runner, &EpisodeRunner::statusMessage, this, &ExplorerPanel::statusMessage);
  // Its curves are what the user watches from now on: into view, as the kernel posterior.
  connect(m_episode_runner, &EpisodeRunner::started, this,
          [this] { scrollControlsTo(m_episode_box); });
  connect(m_suggester, &ObservationSuggester::answered, this, [this] {
    if (const auto proposal = m_suggester->proposal()) {
      Q_EMIT statusMessage(tr("Where to observe next: %1 proposes x = %2 (%3 ms)")
                               .arg(m_suggester->lastModelName())
                               .arg(proposal->x(), 0, 'g', 4)
                               .arg(m_suggester->lastMilliseconds(), 0, 'f', 0));
    }
    Q_EMIT extrasDone();
  });
  connect(service, &PredictionService::modelStarted, this, [this](const QString& id, uint64_t) {
    if (const auto* entry = m_model_list->find(id)) {
      Q_EMIT statusMessage(tr("Computing %1…").arg(entry->name));
    }
  });
  m_view_timer.setSingleShot(true);
  m_view_timer.setInterval(60);
  connect(&m_view_timer, &QTimer::timeout, this, [this] { schedulePredictions(false); });

  add_gp_baselines(*m_controller);
  m_controller->addShippedModels();
  m_presets->follow();
  // The band shown at first: TE-TNP's (the tab's subject), or the oracle's without shipped
  // models.
  if (!m_model_list->select("shipped:tetnp-paper") && !m_model_list->select("shipped:tetnp")) {
    m_model_list->select("gp-oracle");
  }

  const auto& truth = m_truth_box->truth();
  m_context->points()->replace(truth.sample_points(10, truth.spec().noise_std, kTrainingContextLow,
                                                   kTrainingContextHigh, m_sample_seed++));
  fitView();
}

FunctionExplorer::~FunctionExplorer() = default;

QWidget* FunctionExplorer::buildShiftBar() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(8, 0, 8, 0);
  m_shift_control = new ShiftControl({tr("Shift Δ:")}, kMaxShift, 0.01, 2, kSliderShift, bar);
  m_shift_control->setToolTip(
      tr("Translate every context point and the target window by Δ. The shaded band is the "
         "range the models saw in training."));
  row->addWidget(m_shift_control, 1);
  connect(m_shift_control, &ShiftControl::changed, this,
          [this](const Translation& value) { setShift(value.at(0)); });
  return bar;
}

QWidget* FunctionExplorer::buildSidePanel() {
  auto* panel = new QWidget(this);
  auto* column = new QVBoxLayout(panel);

  m_truth_box = new GroundTruthBox(panel);
  connect(m_truth_box, &GroundTruthBox::truthChanged, this, [this] {
    showDataAxes();
    redrawData();
    schedulePredictions(false);
  });
  connect(m_truth_box, &GroundTruthBox::sampleRequested, this, &FunctionExplorer::sampleContext);
  connect(m_truth_box, &GroundTruthBox::clearRequested, this,
          [this] { m_context->replace({}, false, tr("Clear points")); });
  connect(m_truth_box, &GroundTruthBox::showTruthToggled, this, [this] { redrawData(); });

  auto* models_box = m_controller->modelsBox();
  m_model_list->setMinimumHeight(170);
  auto* presets_row = new QHBoxLayout;
  auto* presets_label = new QLabel(tr("Show"), models_box);
  m_presets = new ModelPresets(function_model_presets(), m_model_list, models_box);
  presets_label->setBuddy(m_presets);
  presets_row->addWidget(presets_label);
  presets_row->addWidget(m_presets, 1);
  static_cast<QBoxLayout*>(models_box->layout())->insertLayout(0, presets_row);
  connect(m_presets, &ModelPresets::applied, this, [this] { schedulePredictions(false); });
  connect(m_model_list, &ModelList::modelToggled, this, &FunctionExplorer::onModelToggled);
  // The model in focus: selected in the list, or under the mouse in the list, the plot or its
  // legend; its band is drawn (by default only its band) and its entries are emphasised.
  auto* bands_row = new QHBoxLayout;
  auto* bands_label = new QLabel(tr("±2σ bands"), models_box);
  m_bands = new BandsChoice(m_plot, models_box);
  bands_label->setBuddy(m_bands);
  bands_row->addWidget(bands_label);
  bands_row->addWidget(m_bands, 1);
  static_cast<QBoxLayout*>(models_box->layout())->addLayout(bands_row);
  connect(m_model_list, &ModelList::modelSelected, m_plot, &FunctionPlot::setSelectedModel);
  // A model switched off (by the user or a session) hands the focus, and with it the band, to
  // the first model still shown, instead of leaving no band at all.
  connect(m_model_list, &ModelList::modelToggled, this, [this](const QString& id, bool enabled) {
    if (enabled || id != m_model_list->selectedId()) return;
    for (const auto& entry : m_model_list->entries()) {
      if (entry.enabled && entry.id != id) {
        m_model_list->select(entry.id);
        return;
      }
    }
  });
  auto hover = [this](const QString& id) {
    m_plot->setHoveredModel(id);
    m_model_list->setHighlighted(m_plot->focusedModel() == id ? id : QString());
  };
  connect(m_model_list, &ModelList::modelHovered, this, hover);
  connect(m_plot, &FunctionPlot::modelHovered, this, hover);

  m_aids = new TeachingAidsBox(panel);
  connect(m_aids, &TeachingAidsBox::sweepRequested, this, &FunctionExplorer::openSweep);
  connect(m_aids, &TeachingAidsBox::attentionOff, m_plot, &FunctionPlot::clearAttention);
  m_suggestion_box = new SuggestionBox(panel);
  EpisodeWording wording;
  wording.box_tip =
      tr("An episode: the function is hidden, and each observation is its value at a place "
         "chosen by a strategy plus noise of the truth's σ. The plot tracks the shown models' "
         "held-out error as observations are added; Replay runs another strategy from the same "
         "start, with the same noise, on the same hidden function");
  wording.strategy_tips = {
      tr("Observe where \"Where to observe next?\" proposes: the chosen model and score (switch "
         "it on there)"),
      tr("Observe where the GP oracle (the truth's own kernel) is least certain over the view: "
         "classical uncertainty sampling"),
      tr("Observe at a random place in the view (the same places on a replay)"),
      tr("Click on the plot: the truth answers at that x (the click's height is ignored)")};
  m_episode_box = new EpisodeBox(wording, panel);

  m_samples = new SamplesBox(kCorrelationSamples, panel);
  connect(m_samples, &SamplesBox::requestChanged, this, [this] { schedulePredictions(false); });
  connect(m_samples, &SamplesBox::resampleRequested, this, &FunctionExplorer::resample);
  connect(m_samples, &SamplesBox::correlationChanged, this, &FunctionExplorer::showCorrelation);

  column->addWidget(m_truth_box);
  column->addWidget(models_box);
  column->addWidget(m_controller->metricsBox());
  m_kernel_box = new KernelPosteriorBox(panel);
  m_kernel_box->hide();
  column->addWidget(m_kernel_box);
  column->addWidget(m_samples);
  column->addWidget(m_aids);
  column->addWidget(m_suggestion_box);
  column->addWidget(m_episode_box);
  column->addStretch(1);
  return panel;
}

QUndoStack* FunctionExplorer::undoStack() const {
  return m_context->undoStack();
}

PointSet* FunctionExplorer::points() const {
  return m_context->points();
}

double FunctionExplorer::shift() const {
  return m_context->shift();
}

const std::vector<ModelEntry>& FunctionExplorer::models() const {
  return m_model_list->entries();
}

MetricsTable* FunctionExplorer::metrics() const {
  return m_controller->metrics();
}

void FunctionExplorer::onModelAdded(const QString& id) {
  const auto* entry = m_model_list->find(id);
  if (!entry) return;
  m_presets->follow();
  if (entry->capabilities.attention) m_aids->addAttentionModel(entry->name, id);
  m_suggestion_box->addModel(entry->name, id);
  // The tab's subject proposes by default: the best translation-equivariant model shipped.
  if (id == "shipped:tetnp-paper") m_suggestion_box->setModel(id);
  if (entry->capabilities.joint) m_samples->addJointModel(entry->name, id);
  // A model trained on a series brings its data: the tab shows a held-out window of it, with
  // context sampled from it, in the data's units (a session restores its own choice instead).
  if (!m_applying_session) offerSeriesOf(*entry, true);
}

bool FunctionExplorer::offerSeriesOf(const ModelEntry& entry, bool show) {
  std::shared_ptr<const SeriesTaskSource> source;
  try {
    source = series_source_of(entry.task, entry.checkpoint_path);
  } catch (const Error& e) {
    Q_EMIT statusMessage(tr("%1 was trained on a series, but its data could not be read: %2")
                             .arg(entry.name, QString::fromStdString(e.what())));
    return false;
  }
  if (!source) return false;
  if (source->dim_y() != 1) {
    Q_EMIT statusMessage(tr("%1 predicts %2 outputs; the 1-D tab shows series of one")
                             .arg(entry.name)
                             .arg(source->dim_y()));
    return false;
  }
  m_truth_box->offerSeries(std::move(source), entry.id, entry.name);
  if (show) {
    // Real data has no true kernel: the per-task fitted GP is the classical comparison.
    setModelEnabled("gp-oracle", false);
    setModelEnabled("gp-fitted", true);
    m_model_list->select(entry.id);
    sampleContext(m_truth_box->sampleCount());
    fitView();
    if (const auto* series = m_truth_box->series()) {
      Q_EMIT statusMessage(tr("Showing the data of %1: %2").arg(entry.name, series->describe()));
    }
  }
  return true;
}

void FunctionExplorer::showDataAxes() {
  const auto* series = m_truth_box->series();
  m_plot->setDataAxes(series ? std::optional<DataAxes>(series->axes()) : std::nullopt);
  m_plot->setTruthName(series ? tr("data (%1)").arg(split_name(series->split()))
                              : tr("true function"));
  if (series) {
    const auto& axes = series->axes();
    metrics()->setLikelihoodUnits(
        -std::log(axes.y_scale),
        tr("Mean log-likelihood per point of the window's rows that are not context, in %1's "
           "units (the models see it standardised: %1 = %2 + %3 × ŷ; higher is better)")
            .arg(axes.y_label)
            .arg(axes.y_offset, 0, 'g', 4)
            .arg(axes.y_scale, 0, 'g', 4));
  } else {
    metrics()->setLikelihoodUnits(0.0, {});
  }
}

void FunctionExplorer::setSamples(int count) {
  m_samples->setSamples(count);
}

int FunctionExplorer::samples() const {
  return m_samples->samples();
}

void FunctionExplorer::resample() {
  ++m_draw_seed;
  schedulePredictions(false);
}

void FunctionExplorer::setCorrelationModel(const QString& id) {
  m_samples->setCorrelationModel(id);
}

void FunctionExplorer::setModelEnabled(const QString& id, bool enabled) {
  m_model_list->setEnabled(id, enabled);
}

void FunctionExplorer::onModelToggled(const QString& id, bool enabled) {
  m_presets->follow();
  if (!enabled) {
    m_plot->removeModelCurve(id);
    m_plot->removeModelSamples(id);
    if (id == m_kernel_model) {
      m_kernel_model.clear();
      m_kernel_box->clear();
      m_kernel_box->hide();
    }
  }
  schedulePredictions(false);
}

void FunctionExplorer::redrawData() {
  m_plot->setContextPoints(m_context->shown());
  m_plot->setTargetWindow(kTargetLow + shift(), kTargetHigh + shift());
  const auto* series = m_truth_box->series();
  const bool show = (m_truth_box->hasTruth() || series) && m_truth_box->showTruth();
  if (show) {
    const auto [x, y] = series ? series->curve(shift()) : m_truth_box->truth().curve(shift());
    m_plot->setTruth(x, y);
  }
  m_plot->setTruthVisible(show);
}

void FunctionExplorer::setShift(double shift) {
  if (!std::isfinite(shift)) return;
  shift = std::clamp(shift, -kMaxShift, kMaxShift);
  { m_shift_control->setValue({shift}); }
  if (shift == m_context->shift()) return;
  m_context->setShift(shift);
  m_plot->clearAttention();
  redrawData();
  if (!m_user_view) {
    fitView();
  } else {
    schedulePredictions(false);
  }
}

void FunctionExplorer::fitView() {
  double low = kTargetLow - 1.0 + shift();
  double high = kTargetHigh + 1.0 + shift();
  // Within the slider's range the training band stays in view beside the data (the teaching
  // picture); for larger typed shifts it would squeeze the data into a sliver.
  if (std::abs(shift()) <= kSliderShift) {
    low = std::min(-4.0, low);
    high = std::max(4.0, high);
  }
  double y_low = -2.5, y_high = 2.5;
  const bool series_shown = m_truth_box->series() != nullptr;
  if (const auto* series = m_truth_box->series()) {
    // The window of the series (model coordinates [-2, 2]) and its values.
    low = -2.4 + shift();
    high = 2.4 + shift();
    y_low = std::numeric_limits<double>::infinity();
    y_high = -y_low;
    for (const auto& p : series->points()) {
      y_low = std::min(y_low, p.y());
      y_high = std::max(y_high, p.y());
    }
    const double margin = 0.15 * std::max(y_high - y_low, 0.5);
    y_low -= margin;
    y_high += margin;
  }
  // A series' context points are rows of it, already in view.
  for (const auto& p : series_shown ? std::vector<QPointF>{} : m_context->points()->points()) {
    y_low = std::min(y_low, p.y() - 1.0);
    y_high = std::max(y_high, p.y() + 1.0);
  }
  m_plot->xAxis->setRange(low, high);
  m_plot->yAxis->setRange(y_low, y_high);
  m_plot->scheduleReplot();
  m_user_view = false;
  schedulePredictions(false);
}

void FunctionExplorer::sampleContext(int n) {
  if (const auto* series = m_truth_box->series()) {
    m_context->replace(series->sample_points(n, m_sample_seed++), false, tr("Sample context"));
    return;
  }
  if (!m_truth_box->hasTruth()) {
    Q_EMIT statusMessage(tr("Sampling context needs a ground truth (switch off free-hand mode)."));
    return;
  }
  const auto& truth = m_truth_box->truth();
  auto points = truth.sample_points(n, truth.spec().noise_std, kTrainingContextLow,
                                    kTrainingContextHigh, m_sample_seed++);
  m_context->replace(std::move(points), false, tr("Sample context"));
}

void FunctionExplorer::schedulePredictions(bool refine) {
  m_controller->schedulePredictions(refine);
}

FunctionScene FunctionExplorer::scene() const {
  FunctionScene scene;
  for (const auto& p : m_context->shown()) {
    scene.context_x.push_back(p.x());
    scene.context_y.push_back(p.y());
  }
  scene.shift = shift();
  if (const auto* series = m_truth_box->series()) {
    // The window's rows that are not context are the held-out truth (no oracle: real data).
    const auto& context = m_context->points()->points();
    for (const auto& p : series->points()) {
      const bool in_context = std::any_of(context.begin(), context.end(), [&](const QPointF& c) {
        return std::abs(c.x() - p.x()) < 1e-9 && std::abs(c.y() - p.y()) < 1e-9;
      });
      if (in_context) continue;
      scene.held_out_x.push_back(p.x());
      scene.held_out_y.push_back(p.y());
    }
  } else if (m_truth_box->hasTruth()) {
    const auto& truth = m_truth_box->truth();
    for (const auto& p : truth.held_out()) {
      scene.held_out_x.push_back(p.x());
      scene.held_out_y.push_back(p.y());
    }
    // The ground truth is a GP sample: its kernel is the oracle of this data.
    scene.truth_kernel = truth.kernel();
    scene.truth_noise_std = truth.spec().noise_std;
  }
  return scene;
}

std::optional<PredictionRequest> FunctionExplorer::sceneRequest(bool refine) const {
  PredictionRequest request;
  request.shift = {shift()};
  FunctionScene scene = this->scene();
  const auto range = m_plot->xAxis->range();
  // One query point per two pixels (at least 256) once the user pauses; while they drag, one per
  // four (at least 128): TNP and TE-TNP cost grows with the query points, the curves still look
  // smooth at that spacing, and the settled round 300 ms later redraws at full resolution.
  scene.num_queries = refine ? std::clamp(m_plot->axisRect()->width() / 2, 256, 2000)
                             : std::clamp(m_plot->axisRect()->width() / 4, 128, 1000);
  scene.query_low = range.lower;
  scene.query_high = range.upper;
  auto built = scene_task(scene);
  request.batch = std::move(built.batch);
  request.held_out_x = built.held_out_x;
  request.held_out_y = built.held_out_y;
  request.samples = samples();
  request.sample_seed = m_draw_seed;
  // Joint predictions cost the square (TNP-ND, GP) or more (TNP-A, one pass per point) of
  // their number of points: a coarse grid while the user drags, a finer one once they pause.
  request.sample_points = refine ? 80 : 48;
  request.correlation_model = m_samples->correlationModel();
  return request;
}

void FunctionExplorer::onPredictions(const PredictionResult& result) {
  for (const auto& message : draw_round(*m_plot, result, *m_model_list)) {
    Q_EMIT statusMessage(message);
  }
  const bool correlation = !m_samples->correlationModel().isEmpty();
  for (const auto& prediction : result.models) {
    const auto* entry = m_model_list->find(prediction.id);
    if (entry && entry->enabled && prediction.error.isEmpty()) {
      m_correlation->keep(prediction, entry->capabilities.joint, correlation);
    }
  }
  m_correlation->setPoints(result.sample_x);
  if (m_samples->correlationModel().isEmpty()) m_correlation->clear();
  showCorrelation();
  showKernelPosterior(result);
}

void FunctionExplorer::showKernelPosterior(const PredictionResult& result) {
  for (const auto& prediction : result.models) {
    const auto* entry = m_model_list->find(prediction.id);
    if (!entry || !entry->enabled || !prediction.error.isEmpty() || !prediction.kernel_posterior) {
      continue;
    }
    m_kernel_model = prediction.id;
    m_kernel_box->showPosterior(*prediction.kernel_posterior, entry->name,
                                static_cast<int>(prediction.context.context));
    if (m_kernel_box->isHidden()) {
      m_kernel_box->show();
      // It appears below the metrics: the user has just switched its model on.
      scrollControlsTo(m_kernel_box);
    }
    return;
  }
  // A round without it (a slow model skipped while the user drags) keeps the last one, unless
  // its model is off by now (a session may switch models without a toggle).
  const auto* shown = m_model_list->find(m_kernel_model);
  if (!m_kernel_model.isEmpty() && (!shown || !shown->enabled)) {
    m_kernel_model.clear();
    m_kernel_box->clear();
    m_kernel_box->hide();
  }
}

PointTable FunctionExplorer::predictionTable() const {
  auto table = function_prediction_table(m_controller->lastCompleteRound(), *m_model_list);
  const auto* series = m_truth_box->series();
  if (!series || table.columns.empty()) return table;
  // The data's units, as the axes read: means mapped back, standard deviations scaled.
  const auto& axes = series->axes();
  const auto& data = series->source().data();
  table.columns[0] = data.x_name;
  table.columns[1] = data.y_names.at(0);
  for (auto& row : table.rows) {
    row[0] = axes.data_x(row[0]);
    row[1] = axes.data_y(row[1]);
    for (size_t c = 3; c + 1 < row.size(); c += 2) {
      row[c] = axes.data_y(row[c]);
      row[c + 1] *= axes.y_scale;
    }
  }
  return table;
}

std::vector<std::string> FunctionExplorer::firstColumnLabels(const PointTable& table) const {
  const auto* series = m_truth_box->series();
  if (!series || !series->axes().x_is_time) return {};
  std::vector<std::string> labels;
  labels.reserve(table.rows.size());
  for (const auto& row : table.rows)
    labels.push_back(series->axes().describe_x(row[0]).toStdString());
  return labels;
}

void FunctionExplorer::showCorrelation() {
  m_correlation->show(m_samples->correlationModel(), *m_model_list);
}

void FunctionExplorer::onHovered(double x) {
  m_correlation->hover(x);
  showCorrelation();
  m_attention->probe(x, m_context->shown());
}

void FunctionExplorer::openSweep() {
  auto* dialog = new SweepDialog(m_model_list->enabledEntries(), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  dialog->start();
}

bool FunctionExplorer::extrasPending() const {
  return m_suggester->pending() || m_episode_runner->pending() > 0;
}

Session FunctionExplorer::session() const {
  Session s;
  s.has_truth = m_truth_box->hasTruth();
  s.truth = m_truth_box->truth().spec();
  s.show_truth = m_truth_box->showTruth();
  if (const auto* series = m_truth_box->series()) {
    s.series_model = m_truth_box->seriesModelId();
    s.series_split = series->split() == Split::Train        ? "training"
                     : series->split() == Split::Validation ? "validation"
                                                            : "test";
    s.series_window = series->window();
  }
  s.context = m_context->points()->points();
  s.shift = shift();
  s.enabled_models = m_model_list->enabledIds();
  s.samples = samples();
  s.bands = m_bands->mode();
  s.correlation_model = m_samples->correlationModel();
  s.suggestion_model = m_suggestion_box->model();
  s.suggestion_score = m_suggestion_box->score() == AcquisitionScore::predictive_std
                           ? "predictive_std"
                           : "variance_reduction";
  s.checkpoints = m_model_list->userCheckpoints();
  s.episode = m_episode_runner->episode();
  s.episode_strategy = strategy_id(m_episode_box->strategy());
  s.episode_plots_ll = m_episode_box->showsLogLikelihood();
  s.has_view = true;
  s.view_x_low = m_plot->xAxis->range().lower;
  s.view_x_high = m_plot->xAxis->range().upper;
  s.view_y_low = m_plot->yAxis->range().lower;
  s.view_y_high = m_plot->yAxis->range().upper;
  return s;
}

void FunctionExplorer::applySession(const Session& s) {
  if (std::abs(s.shift) > kMaxShift) {
    throw DataError(QString("session: shift %1 is outside [-%2, %2]")
                        .arg(s.shift)
                        .arg(kMaxShift)
                        .toStdString());
  }
  // Load every checkpoint first: if one fails, nothing has changed yet.
  auto loaded = m_model_list->loadMissing(s.checkpoints, m_device);
  // The series shown must be readable before anything changes, too.
  std::shared_ptr<const SeriesTaskSource> series;
  const ModelEntry* series_entry = nullptr;
  if (!s.series_model.isEmpty()) {
    for (const auto& entry : loaded) {
      if (entry.id == s.series_model) series_entry = &entry;
    }
    if (!series_entry) series_entry = m_model_list->find(s.series_model);
    if (!series_entry) {
      throw DataError("session: the series shown belongs to " + s.series_model.toStdString() +
                      ", which is not among its models");
    }
    series = series_source_of(series_entry->task, series_entry->checkpoint_path);
    if (!series) {
      throw DataError("session: " + s.series_model.toStdString() + " was not trained on a series");
    }
  }
  const auto series_name = series_entry ? series_entry->name : QString();
  {
    const QScopedValueRollback applying(m_applying_session, true);
    for (auto& entry : loaded) m_controller->addModel(std::move(entry), false);
  }
  m_truth_box->set(s.has_truth, s.truth, s.show_truth);
  if (series) {
    const auto split = s.series_split == "training"     ? Split::Train
                       : s.series_split == "validation" ? Split::Validation
                                                        : Split::Test;
    m_truth_box->offerSeries(series, s.series_model, series_name);
    m_truth_box->setSeriesWindow(split, s.series_window);
  }
  showDataAxes();
  m_model_list->setEnabledIds(s.enabled_models);
  m_presets->follow();
  setSamples(s.samples);
  m_bands->setMode(s.bands);
  setCorrelationModel(s.correlation_model);  // empty: off
  m_suggestion_box->setScore(s.suggestion_score == "predictive_std"
                                 ? AcquisitionScore::predictive_std
                                 : AcquisitionScore::variance_reduction);
  if (!s.suggestion_model.isEmpty()) m_suggestion_box->setModel(s.suggestion_model);
  m_suggestion_box->setEnabledSuggestion(!s.suggestion_model.isEmpty());
  m_context->undoStack()->clear();
  {
    QSignalBlocker block(m_context->points());
    m_context->points()->replace(s.context);
  }
  {
    const QSignalBlocker block(m_episode_box);  // its strategy would switch the context
    m_episode_box->setStrategy(strategy_from_id(s.episode_strategy));
    m_episode_box->setShowsLogLikelihood(s.episode_plots_ll);
  }
  m_episode_runner->restore(s.episode);
  m_context->setShift(s.shift + 1.0);  // force setShift to apply
  m_user_view = s.has_view;
  setShift(s.shift);
  if (s.has_view) {
    m_plot->xAxis->setRange(s.view_x_low, s.view_x_high);
    m_plot->yAxis->setRange(s.view_y_low, s.view_y_high);
  }
  redrawData();
  schedulePredictions(false);
}

void FunctionExplorer::restoreSection(const QJsonObject& section) {
  applySession(Session::from_json(section));
}

void FunctionExplorer::openDataFile(const QString& path) {
  auto imported = import_points(this, path);
  if (!imported) return;  // cancelled
  const auto count = static_cast<int>(imported->points.size());
  // The file's x is as shown, at the current Δ.
  m_context->replace(std::move(imported->points), true,
                     tr("Import %1").arg(QFileInfo(path).fileName()));
  Q_EMIT statusMessage(tr("Imported %1 points %2").arg(count).arg(imported->summary));
}

bool FunctionExplorer::makeProbeEdit(int index) {
  return m_context->nudge(index);
}

void FunctionExplorer::exportView(const QString& path) {
  m_plot->exportTo(path);
}

void FunctionExplorer::repaintNow() {
  m_plot->replotNow();
}

}  // namespace npe::widgets
