#include "image/image_explorer.h"

#include <cmath>
#include <numeric>
#include <random>

#include <QEvent>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QKeyEvent>
#include <QLabel>
#include <QScopedValueRollback>
#include <QScrollArea>
#include <QUndoStack>
#include <QVBoxLayout>

#include "common/colour_map.h"
#include "common/explorer_controller.h"
#include "common/export.h"
#include "common/metrics_table.h"
#include "common/model_list.h"
#include "common/models_box.h"
#include "common/shift_control.h"
#include "image/context_mask.h"
#include "image/image_canvas.h"
#include "image/image_controls.h"
#include "image/image_readout.h"
#include "image/prediction_grid.h"
#include "npe/data/image_scene.h"
#include "npe/data/image_tasks.h"
#include "npe/data/picture_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_catalog.h"

namespace npe::widgets {
namespace {

// Shown by default: the teaching comparison of models trained with translations |Δ| <= 4, with
// the best central TE-PT-TNP: the medium one (1.018 against the small one's 0.840 on 128
// tfmnist-central tasks; docs/history/benchmarks.md, "The teaching protocol"), whose mean is the
// sharpest; and the best translation-equivariant model by held-out LL, the TE-PT-TNP with a σ per
// pixel (3.32 at Δ = 0 on 64 tfmnist-central tasks, its 50 / 90 / 95 % intervals holding 0.47 /
// 0.91 / 0.94 of the garment's pixels: BENCHMARKS.md, "Images: σ per pixel"), whose σ column shows
// where the model is unsure. The small central TE-PT-TNP stays in the list.
const QStringList kDefaultImageModels = {"shipped:convcnp2d-central", "shipped:pttnp-central",
                                         "shipped:tepttnp-central-medium", "shipped:tepttnp-het"};
// The SE-ARD GP is cubic in the context size: beyond this it reports instead of freezing.
constexpr int64_t kGpMaxContext = 1200;

// The largest training translation of a model trained on translated pictures, Fashion-MNIST's
// or the user's, or -1 when the checkpoint's task is not one. Read from the task's settings
// alone: rebuilding a pictures task would read its whole folder.
int train_window_of(const nlohmann::json& task_configuration) {
  try {
    const auto kind = task_configuration.value("kind", std::string());
    if (kind == "image") {
      return static_cast<int>(ImageTaskConfig::from_json(task_configuration).train_max_translation);
    }
    if (kind == "pictures") {
      return static_cast<int>(
          PictureTaskConfig::from_json(task_configuration).train_max_translation);
    }
  } catch (const std::exception&) {
    // No (readable) task in the checkpoint: no window to draw.
  }
  return -1;
}

}  // namespace

ImageExplorer::ImageExplorer(QWidget* parent, torch::Device device) : ExplorerPanel(parent) {
  setFocusPolicy(Qt::StrongFocus);
  m_mask = new ContextMask(m_side, this);
  m_undo = new QUndoStack(this);
  ExplorerController::Settings settings;
  settings.task_kinds = {"image", "pictures"};
  settings.dim_x = 2;
  settings.dim_y = {1, 3};  // grey and colour pictures
  settings.model_description = tr("an image model (D_x = 2, D_y = 1 or 3)");
  settings.shipped_folder = "tfmnist";
  settings.default_models = kDefaultImageModels;
  settings.uncoloured_entries = 1;  // the GP baseline
  settings.metrics_help =
      tr("Mean log-likelihood of the true grey values of every non-context pixel of the canvas "
         "(higher is better)");
  m_controller = new ExplorerController(this, std::move(settings), device);
  m_controller->setSceneRequest([this](bool) { return sceneRequest(); });
  m_controller->setEntryDecorator([this](ModelEntry& entry) { nameModel(entry); });
  m_models = m_controller->models();
  m_metrics = m_controller->metrics();
  m_canvas = new ImageCanvas(this);
  m_canvas->setMinimumSize(300, 300);
  m_grid = new PredictionGrid(this);
  m_hover =
      new QLabel(tr("Hover over a pixel to see its value and every model's prediction."), this);
  m_hover->setWordWrap(true);
  m_hover->setMinimumHeight(48);

  // The exported / screenshotted view: canvas and predictions side by side.
  m_view_area = new QWidget(this);
  auto* view_layout = new QHBoxLayout(m_view_area);
  auto* canvas_column = new QVBoxLayout;
  auto* caption = new QLabel(tr("<b>Ground truth and context</b>: context pixels in their true "
                                "grey or colour, the other pixels tinted blue; dashed square: "
                                "where the shown models saw pictures in training"),
                             m_view_area);
  caption->setWordWrap(true);
  canvas_column->addWidget(caption);
  canvas_column->addWidget(m_canvas, 1);
  canvas_column->addWidget(m_hover);
  view_layout->addLayout(canvas_column, 3);
  m_grid_area = new QScrollArea(m_view_area);
  m_grid_area->setWidget(m_grid);
  m_grid_area->setWidgetResizable(true);
  m_grid_area->setFrameShape(QFrame::NoFrame);
  m_grid_area->setAlignment(Qt::AlignHCenter | Qt::AlignTop);
  m_grid_area->viewport()->installEventFilter(this);
  view_layout->addWidget(m_grid_area, 4);

  m_controls = new ImageControls(test_image_count(), maxTranslation(), this);
  m_controls->addGroup(m_controller->modelsBox());
  m_controls->addGroup(m_controller->metricsBox());
  m_shift = m_controls->shift();
  m_canvas->setBrushSize(m_controls->brush());
  connect(m_controls, &ImageControls::testImageChosen, this,
          [this](int index) { reportErrors({}, [&] { showTestImage(index); }); });
  m_controls->showCollection({}, test_image_count());
  connect(m_controls, &ImageControls::pictureChosen, this, [this](const QString& path) {
    reportErrors(tr("Could not open picture"), [&] { openDataFile(path); });
  });
  connect(m_controls, &ImageControls::brushChanged, m_canvas, &ImageCanvas::setBrushSize);
  connect(m_controls, &ImageControls::randomContextRequested, this,
          [this](int percent) { randomContext(percent); });
  connect(m_controls, &ImageControls::clearContextRequested, this,
          [this] { m_undo->push(new ReplaceMaskCommand(m_mask, {}, tr("Clear context"))); });
  connect(m_controls, &ImageControls::translationChosen, this, &ImageExplorer::setTranslation);
  connect(m_models, &ModelList::modelToggled, this, [this](const QString& id, bool enabled) {
    if (enabled) fitDataToModel(id);
    redrawCanvas();
    schedulePredictions(false);
  });
  connect(m_controller, &ExplorerController::modelAdded, this, [this](const QString& id) {
    if (const auto* entry = m_models->find(id)) offerPicturesOf(*entry, !m_applying_session);
  });
  connect(m_controls, &ImageControls::collectionChosen, this, [this](const QString& id) {
    reportErrors(tr("Could not show those pictures"), [&] { showCollection(id); });
  });
  layOutViewAndControls(m_view_area, m_controls, 330);

  connect(m_mask, &ContextMask::changed, this, [this] {
    redrawCanvas();
    schedulePredictions(false);
  });
  connect(m_canvas, &ImageCanvas::strokeRequested, this, &ImageExplorer::onStroke);
  connect(m_canvas, &PixelView::hovered, this, &ImageExplorer::onHovered);
  connect(m_grid, &PredictionGrid::hovered, this, &ImageExplorer::onHovered);
  connect(m_controller, &ExplorerController::roundReady, this, &ImageExplorer::onPredictions);
  connect(m_controller, &ExplorerController::roundComplete, this,
          [this](const PredictionResult&, const QString& timing) {
            Q_EMIT statusMessage(tr("%1 context pixels · Δ = (%2, %3) · %4")
                                     .arg(m_mask->count())
                                     .arg(m_h)
                                     .arg(m_v)
                                     .arg(timing));
          });

  m_models->add(baseline_entry("gp-se-ard", 40, 200, kGpMaxContext), false);
  m_controller->addShippedModels();

  try {
    setSource(test_image(0));
  } catch (const Error& e) {
    ImageSource blank;
    blank.test_index = -1;
    blank.pixels = torch::zeros({ImageSource::kSide, ImageSource::kSide});
    blank.description =
        tr("no Fashion-MNIST data (install dataset-fashion-mnist) — open a picture");
    setSource(std::move(blank));
    Q_EMIT statusMessage(QString::fromUtf8(e.what()));
  }
  randomContext(10.0);
  m_undo->clear();
}

ImageExplorer::~ImageExplorer() = default;

void ImageExplorer::nameModel(ModelEntry& entry) const {
  // A model with a σ per pixel is told apart from its homoscedastic twin of the same kind.
  const auto model = entry.predictor ? entry.predictor->neural_model() : nullptr;
  if (model && model->config().heteroscedastic) entry.name += tr(" · σ per pixel");
  // Every image model says where it saw pictures in training.
  const int window = train_window_of(entry.task);
  if (window >= 0) entry.name += tr(" · trained |Δ|≤%1").arg(window);
}

QStringList ImageExplorer::dataSuffixes() const {
  return picture_suffixes();
}

void ImageExplorer::openDataFile(const QString& path) {
  // In the shown pictures' size and colour: what the shown models take.
  setSource(picture_file(path, m_source.side(), m_source.channels()));  // throws first
  Q_EMIT statusMessage(tr("Opened %1").arg(m_source.description));
}

void ImageExplorer::showTestImage(int index) {
  if (m_collection.isEmpty()) {
    setSource(test_image(index));
    return;
  }
  const auto* entry = m_models->find(m_collection);
  setSource(collection_picture(*m_collections.at(m_collection), index, m_collection,
                               entry ? entry->name : m_collection));
}

bool ImageExplorer::offerPicturesOf(const ModelEntry& entry, bool show) {
  if (!entry.task.is_object() || entry.task.value("kind", std::string()) != "pictures") {
    return false;
  }
  std::shared_ptr<const PictureTaskSource> pictures;
  try {
    auto task = task_source_from_json(entry.task);
    pictures = std::dynamic_pointer_cast<const PictureTaskSource>(
        std::shared_ptr<const TaskSource>(std::move(task)));
  } catch (const Error& e) {
    Q_EMIT statusMessage(tr("%1 was trained on pictures that could not be read: %2")
                             .arg(entry.name, QString::fromStdString(e.what())));
    return false;
  }
  if (!pictures) return false;
  m_collections[entry.id] = pictures;
  m_controls->addCollection(entry.id, entry.name);
  if (show) reportErrors(tr("Could not show its pictures"), [&] { showCollection(entry.id); });
  return true;
}

void ImageExplorer::showCollection(const QString& id) {
  ImageSource source;
  int canvas = kFashionMnistCanvas;
  int count = test_image_count();
  if (id.isEmpty()) {
    source = test_image(0);  // throws first
  } else {
    const auto it = m_collections.find(id);
    if (it == m_collections.end()) {
      throw DataError("no model's pictures are called " + id.toStdString());
    }
    const auto* entry = m_models->find(id);
    source = collection_picture(*it->second, 0, id, entry ? entry->name : id);
    canvas = static_cast<int>(it->second->config().canvas);
    count = static_cast<int>(it->second->pictures(Split::Test).size(0));
  }
  m_collection = id;
  m_controls->showCollection(id, count);
  setGeometry(canvas, std::move(source));
}

void ImageExplorer::setGeometry(int canvas, ImageSource source) {
  // The models that take another number of channels go; those that fit stay.
  for (const auto& entry : m_models->enabledEntries()) {
    if (entry.outputs != 0 && entry.outputs != source.channels()) {
      m_models->setEnabled(entry.id, false);
    }
  }
  const bool resized = canvas != m_side;
  m_h = m_v = 0;
  // The picture first: every redraw from here on puts it on the new canvas.
  m_source = source;
  m_side = canvas;
  if (resized) {
    // Context pixels and their undo steps are indices of the old canvas.
    m_undo->clear();
    const QSignalBlocker block(m_mask);
    m_mask->resize(canvas);
  }
  m_controls->setMaxTranslation(maxTranslation());
  m_shift->setValue({0.0, 0.0});
  setSource(std::move(source));
  if (resized) {
    randomContext(10.0);
    m_undo->clear();
  }
}

void ImageExplorer::fitDataToModel(const QString& id) {
  const auto* entry = m_models->find(id);
  if (!entry || entry->outputs == 0 || entry->outputs == m_source.channels()) return;
  // A colour model shown beside a grey picture (or the reverse): its own pictures, if it has
  // some, else it cannot run here.
  if (m_collections.count(id) != 0) {
    reportErrors(tr("Could not show its pictures"), [&] { showCollection(id); });
    return;
  }
  const auto name = entry->name;
  const auto outputs = entry->outputs;
  m_models->setEnabled(id, false);
  Q_EMIT statusMessage(tr("%1 predicts %2 channels; the picture shown has %3")
                           .arg(name)
                           .arg(outputs)
                           .arg(m_source.channels()));
}

void ImageExplorer::setSource(ImageSource source) {
  m_source = std::move(source);
  if (m_source.test_index >= 0) m_controls->showTestImage(m_source.test_index);
  m_controls->setSourceText(m_source.description);
  redrawCanvas();
  schedulePredictions(false);
}

void ImageExplorer::randomContext(double percent) {
  std::mt19937_64 engine(m_random_seed++);
  const int side = m_side;
  std::vector<int> all(side * side);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), engine);
  const auto n =
      static_cast<size_t>(std::lround(std::clamp(percent, 0.0, 100.0) / 100.0 * side * side));
  all.resize(n);
  std::sort(all.begin(), all.end());
  m_undo->push(new ReplaceMaskCommand(m_mask, std::move(all), tr("Random context")));
}

void ImageExplorer::setTranslation(int h, int v) {
  h = std::clamp(h, -maxTranslation(), maxTranslation());
  v = std::clamp(v, -maxTranslation(), maxTranslation());
  m_shift->setValue({double(h), double(v)});
  if (h == m_h && v == m_v) return;
  m_h = h;
  m_v = v;
  redrawCanvas();
  schedulePredictions(false);
}

void ImageExplorer::setModelEnabled(const QString& id, bool enabled) {
  m_models->setEnabled(id, enabled);
}

int ImageExplorer::baseIndex(int row, int column) const {
  const int r = row - m_v, c = column - m_h;
  return r >= 0 && c >= 0 && r < m_side && c < m_side ? r * m_side + c : -1;
}

torch::Tensor ImageExplorer::displayedTruth() const {
  return place_on_canvas(m_source.pixels, m_side, m_h, m_v);
}

QRect ImageExplorer::trainingWindow() const {
  // The smallest training window among the shown models: where their pictures were placed.
  int window = -1;
  for (const auto& entry : m_models->enabledEntries()) {
    const int w = train_window_of(entry.task);
    if (w >= 0) window = window < 0 ? w : std::min(window, w);
  }
  if (window < 0) return {};
  const int side = m_source.side();
  const int start = (m_side - side) / 2 - window;
  return {start, start, side + 2 * window, side + 2 * window};
}

void ImageExplorer::redrawCanvas() {
  const int side = m_side;
  const int channels = m_source.channels();
  const auto truth = displayedTruth().contiguous();
  const auto* values = truth.data_ptr<float>();
  const auto byte = [](double v) {
    return static_cast<int>(std::lround(255 * std::clamp(v, 0.0, 1.0)));
  };
  QImage image(side, side, QImage::Format_RGB32);
  for (int r = 0; r < side; ++r) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
    for (int c = 0; c < side; ++c) {
      const float* pixel = values + (r * side + c) * channels;
      // The tint of target pixels follows the brightness (the mean of a colour's channels).
      double v = 0.0;
      for (int k = 0; k < channels; ++k) v += pixel[k] / channels;
      const int base = baseIndex(r, c);
      if (base >= 0 && m_mask->at(base)) {
        line[c] = channels == 3 ? qRgb(byte(pixel[0]), byte(pixel[1]), byte(pixel[2]))
                                : qRgb(byte(v), byte(v), byte(v));
      } else {
        // Targets: the picture faintly, over dark blue, so context pixels stand out.
        line[c] = qRgb(static_cast<int>(20 + 60 * v), static_cast<int>(30 + 60 * v),
                       static_cast<int>(80 + 60 * v));
      }
    }
  }
  m_canvas->setImage(image);
  m_canvas->setFrame(trainingWindow());
}

void ImageExplorer::onStroke(const std::vector<int>& display_pixels, bool on, int stroke) {
  std::vector<int> base;
  for (int p : display_pixels) {
    const int b = baseIndex(p / m_side, p % m_side);
    if (b >= 0) base.push_back(b);
  }
  if (!base.empty()) m_undo->push(new PaintPixelsCommand(m_mask, base, on, stroke));
}

void ImageExplorer::schedulePredictions(bool refine) {
  m_controller->schedulePredictions(refine);
}

std::optional<PredictionRequest> ImageExplorer::sceneRequest() const {
  ImageScene scene;
  scene.picture = m_source.pixels;
  scene.canvas = m_side;
  for (const int index : m_mask->indices()) scene.context.push_back(index);
  scene.h = m_h;
  scene.v = m_v;
  auto built = scene_task(scene);
  PredictionRequest request;
  request.shift = {double(m_v), double(m_h)};  // inputs are (row, column)
  request.batch.task = std::move(built.task);
  request.held_out_index = built.held_out_index;
  request.held_out_index_y = built.held_out_y;
  return request;
}

void ImageExplorer::onPredictions(const PredictionResult& result) {
  m_last = result;
  std::vector<PredictionGrid::Row> rows;
  for (const auto& entry : m_models->enabledEntries()) {
    PredictionGrid::Row row{entry.id, entry.name, {}, entry.colour, {}, {}};
    bool found = false;
    for (const auto& p : result.models) {
      if (p.id != entry.id) continue;
      found = true;
      if (!p.error.isEmpty()) {
        row.status = tr("error: %1").arg(p.error);
      } else if (!p.mean.defined() || p.mean.size(0) != int64_t(m_side) * m_side) {
        // The prediction kept from before the canvas changed: another canvas's pixels.
        row.status = tr("computing…");
      } else {
        // [side, side] grey, [side, side, 3] colour.
        row.mean = p.mean.view({m_side, m_side, -1}).squeeze(2);
        row.stddev = p.stddev.view({m_side, m_side, -1}).squeeze(2);
        auto note = p.subsetNote();
        if (p.updating) note = note.isEmpty() ? tr("updating…") : note + ", " + tr("updating…");
        // Where the user looks: beside the model's pictures, what of the scene it never saw.
        if (!p.outside_training.isEmpty()) {
          const auto outside = tr("outside training: %1").arg(p.outside_training.join("; "));
          note = note.isEmpty() ? outside : note + ", " + outside;
        }
        if (!note.isEmpty()) row.name = QString("%1 (%2)").arg(entry.name, note);
      }
    }
    if (!found) row.status = tr("computing…");
    rows.push_back(std::move(row));
  }
  m_grid->setRows(std::move(rows));
  fitGridToHeight();
}

bool ImageExplorer::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_grid_area->viewport() && event->type() == QEvent::Resize) fitGridToHeight();
  return ExplorerPanel::eventFilter(watched, event);
}

void ImageExplorer::fitGridToHeight() {
  // Four default models at 1920 × 1080: squares as wide as the column would push the last row
  // out of sight; smaller squares keep every model on screen.
  m_grid->setMaximumWidth(m_grid->widthShowingEveryRow(m_grid_area->viewport()->height()));
}

ShownCanvas ImageExplorer::shownCanvas() const {
  const int side = m_side;
  ShownCanvas canvas{displayedTruth(), std::vector<bool>(size_t(side * side)), side};
  for (int p = 0; p < side * side; ++p) {
    const int base = baseIndex(p / side, p % side);
    canvas.context[size_t(p)] = base >= 0 && m_mask->at(base);
  }
  return canvas;
}

PointTable ImageExplorer::predictionTable() const {
  return image_prediction_table(shownCanvas(), m_last, *m_models);
}

QString ImageExplorer::describePixel(int row, int column) const {
  return describe_pixel(shownCanvas(), m_last, *m_models, row, column);
}

void ImageExplorer::onHovered(int row, int column) {
  m_canvas->setHighlight(row, column);
  m_grid->setHighlight(row, column);
  if (row >= 0) m_hover->setText(describePixel(row, column));
}

void ImageExplorer::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Left:
      setTranslation(m_h - 1, m_v);
      return;
    case Qt::Key_Right:
      setTranslation(m_h + 1, m_v);
      return;
    case Qt::Key_Up:
      setTranslation(m_h, m_v - 1);
      return;
    case Qt::Key_Down:
      setTranslation(m_h, m_v + 1);
      return;
    default:
      ExplorerPanel::keyPressEvent(event);
  }
}

QJsonObject ImageExplorer::saveSection() const {
  QJsonObject source;
  if (m_source.test_index >= 0) {
    source["test_index"] = m_source.test_index;
  } else {
    source["file"] = m_source.file_path;
  }
  // Whose pictures set the canvas, size and colour (absent: Fashion-MNIST's).
  if (!m_collection.isEmpty()) source["collection"] = m_collection;
  QJsonArray context;
  for (int i : m_mask->indices()) context.append(i);
  return {{"source", source},
          {"context", context},
          {"translation", QJsonArray{m_h, m_v}},
          {"brush", m_controls->brush()},
          {"models", m_controller->sessionModels()}};
}

void ImageExplorer::restoreSection(const QJsonObject& section) {
  auto fail = [](const QString& message) { throw DataError(("images: " + message).toStdString()); };
  // Validate and load everything first: on any error nothing has changed.
  const auto source_json = section.value("source").toObject();
  const auto models = section.value("models").toObject();
  auto loaded = m_controller->loadSessionModels(models);
  // Whose pictures set the canvas: a model of the session's, or one shown already.
  const auto collection = source_json.value("collection").toString();
  std::shared_ptr<const PictureTaskSource> pictures;
  QString collection_name = collection;
  if (!collection.isEmpty()) {
    if (const auto it = m_collections.find(collection); it != m_collections.end()) {
      pictures = it->second;
    }
    const ModelEntry* owner = m_models->find(collection);
    for (const auto& entry : loaded) {
      if (entry.id == collection) owner = &entry;
    }
    if (!owner) fail("its pictures are those of " + collection + ", which is not among its models");
    collection_name = owner->name;
    if (!pictures) {
      pictures = std::dynamic_pointer_cast<const PictureTaskSource>(
          std::shared_ptr<const TaskSource>(task_source_from_json(owner->task)));
    }
    if (!pictures) fail(collection + " was not trained on pictures");
  }
  const int canvas = pictures ? static_cast<int>(pictures->config().canvas) : kFashionMnistCanvas;
  ImageSource source;
  if (source_json.contains("file")) {
    source = pictures ? picture_file(source_json.value("file").toString(),
                                     static_cast<int>(pictures->config().size),
                                     static_cast<int>(pictures->dim_y()))
                      : picture_file(source_json.value("file").toString());
  } else {
    const auto index = source_json.value("test_index").toInt(-1);
    if (index < 0) fail("'source' needs a test_index >= 0 or a file");
    source = pictures ? collection_picture(*pictures, index, collection, collection_name)
                      : test_image(index);
  }
  std::vector<int> context;
  for (const auto& v : section.value("context").toArray()) {
    if (!v.isDouble() || v.toInt(-1) < 0 || v.toInt() >= canvas * canvas ||
        v.toDouble() != v.toInt()) {
      fail(QString("context pixels must be integers in 0..%1").arg(canvas * canvas - 1));
    }
    context.push_back(v.toInt());
  }
  const int max_translation = (canvas - source.side()) / 2;
  const auto translation = section.value("translation").toArray();
  if (translation.size() != 2 || !translation[0].isDouble() || !translation[1].isDouble() ||
      std::abs(translation[0].toDouble()) > max_translation ||
      std::abs(translation[1].toDouble()) > max_translation) {
    fail(QString("'translation' must be [Δh, Δv] within ±%1").arg(max_translation));
  }
  {
    const QScopedValueRollback applying(m_applying_session, true);
    m_controller->applySessionModels(std::move(loaded), models);
  }
  if (pictures) {
    m_collections[collection] = pictures;
    m_controls->addCollection(collection, collection_name);
  }
  m_collection = collection;
  m_controls->showCollection(
      collection, pictures ? int(pictures->pictures(Split::Test).size(0)) : test_image_count());
  m_controls->setBrush(section.value("brush").toInt(m_controls->brush()));
  setGeometry(canvas, std::move(source));
  {
    QSignalBlocker block(m_mask);
    m_mask->replace(context);
  }
  m_undo->clear();
  setTranslation(translation[0].toInt(), translation[1].toInt());
  redrawCanvas();
  schedulePredictions(false);
}

void ImageExplorer::exportView(const QString& path) {
  export_widget(m_view_area, path);
}

bool ImageExplorer::makeProbeEdit(int index) {
  // Toggle a pixel near the picture's centre, as one brush dab would.
  const int r = m_side / 2 - 4 + index % 8, c = m_side / 2 - 4 + (index / 8) % 8;
  const int base = r * m_side + c;
  m_undo->push(new PaintPixelsCommand(m_mask, {base}, !m_mask->at(base), 100000 + index));
  return true;
}

void ImageExplorer::repaintNow() {
  m_view_area->repaint();
}

}  // namespace npe::widgets
