// GUI tests of the image tab (QtTest, offscreen): painting and erasing context with simulated
// mouse events, undo with merged strokes, translation, predictions, metrics, session round trip,
// and an unreadable picture leaving the state intact.

#include <cmath>
#include <random>

#include <QDir>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include "common/explorer_panel.h"
#include "common/metrics_table.h"
#include "common/model_list.h"
#include "common/session_file.h"
#include "image/context_mask.h"
#include "image/image_canvas.h"
#include "image/image_explorer.h"
#include "image/prediction_grid.h"
#include "npe/data/image_tasks.h"
#include "npe/data/picture_tasks.h"
#include "npe/data/point_table.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"

using npe::widgets::ImageExplorer;

namespace {

// An untrained model of `config` saved in `dir` as if trained on `source`'s task.
QString save_untrained(const QTemporaryDir& dir, const QString& file,
                       const npe::ModelConfig& config, const npe::TaskSource& source) {
  auto model = npe::make_model(config);
  npe::CheckpointMetadata metadata;
  metadata.model = config;
  metadata.task = source.to_json();
  const auto path = dir.filePath(file);
  npe::save_checkpoint(path.toStdString(), *model, metadata);
  return path;
}

// A tiny untrained on-grid ConvCNP saved as if trained on the central protocol.
QString write_image_checkpoint(const QTemporaryDir& dir) {
  npe::ImageTaskConfig task;
  task.name = "tfmnist-central";
  task.train_max_translation = 4;
  npe::ImageTaskSource source(task);
  auto config = npe::default_model_config("convcnp2d", "small", source);
  config.options<npe::ConvCnp2dOptions>().conv_channels = 8;
  config.options<npe::ConvCnp2dOptions>().cnn_layers = 2;
  return save_untrained(dir, "convcnp2d-tiny.pt", config, source);
}

// A folder of 40 small colour pictures (8 x 8 PNGs of random colours) and a tiny untrained
// ConvCNP saved as if trained on them (a 16-pixel canvas, |h|, |v| <= 4).
QString write_colour_pictures_checkpoint(const QTemporaryDir& dir) {
  const QString folder = dir.filePath("pictures");
  QDir().mkpath(folder);
  std::mt19937 engine(3);
  for (int i = 0; i < 40; ++i) {
    QImage image(8, 8, QImage::Format_RGB888);
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) image.setPixel(c, r, qRgb(engine() % 256, engine() % 256, 40));
    }
    image.save(QString("%1/picture-%2.png").arg(folder).arg(i));
  }
  npe::PictureTaskConfig task;
  task.data = folder.toStdString();
  task.colour = "rgb";
  task.validation_fraction = task.test_fraction = 0.25;
  npe::PictureTaskSource source(task);
  auto config = npe::default_model_config("convcnp2d", "small", source);
  config.options<npe::ConvCnp2dOptions>().conv_channels = 8;
  config.options<npe::ConvCnp2dOptions>().cnn_layers = 2;
  return save_untrained(dir, "convcnp2d-colour.pt", config, source);
}

void send_mouse(QWidget* widget, QEvent::Type type, QPointF position, Qt::MouseButton button,
                Qt::MouseButtons buttons) {
  QMouseEvent event(type, position, widget->mapToGlobal(position), button, buttons, Qt::NoModifier);
  QApplication::sendEvent(widget, &event);
}

// Widget position of the centre of a canvas pixel.
QPointF pixel_centre(const npe::widgets::ImageCanvas* canvas, int row, int column) {
  const auto rect = canvas->imageRect();
  const double cell = rect.width() / canvas->image().width();
  return {rect.left() + (column + 0.5) * cell, rect.top() + (row + 0.5) * cell};
}

bool wait_for_refined_round(ImageExplorer& explorer, int timeout_ms = 60000) {
  QSignalSpy spy(&explorer, &ImageExplorer::predictionsUpdated);
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < timeout_ms) {
    if (!spy.wait(std::max<qint64>(1, timeout_ms - timer.elapsed()))) return false;
    for (const auto& args : spy) {
      if (args.at(0).toBool()) return true;
    }
  }
  return false;
}

}  // namespace

class ImageExplorerTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() {
    m_explorer = std::make_unique<ImageExplorer>();
    // Independent of the shipped models: every test enables what it uses.
    m_explorer->modelList()->setEnabledIds({});
    m_explorer->resize(1300, 800);
    m_explorer->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_explorer.get()));
  }
  void cleanup() { m_explorer.reset(); }

  void startsWithATestImageAndRandomContext() {
    if (npe::widgets::test_image_count() == 0) QSKIP("Fashion-MNIST is not installed");
    QCOMPARE(m_explorer->source().test_index, 0);
    QVERIFY(m_explorer->source().pixels.max().item<float>() > 0.5f);
    const int expected = static_cast<int>(std::lround(0.1 * 56 * 56));
    QCOMPARE(m_explorer->mask()->count(), expected);
    m_explorer->showTestImage(7);
    QCOMPARE(m_explorer->source().test_index, 7);
    QVERIFY_THROWS_EXCEPTION(npe::DataError, m_explorer->showTestImage(1000000));
    QCOMPARE(m_explorer->source().test_index, 7);
  }

  void exportPredictionsWritesEveryPixel() {
    QTemporaryDir dir;
    m_explorer->setModelEnabled("gp-se-ard", true);
    QVERIFY(wait_for_refined_round(*m_explorer));
    const auto out = dir.filePath("pixels.csv");
    m_explorer->exportPredictions(out);
    const auto table = npe::read_point_table(out.toStdString());
    QCOMPARE(int(table.rows.size()),
             ImageExplorer::kFashionMnistCanvas * ImageExplorer::kFashionMnistCanvas);
    const int context = table.column_index("context"), truth = table.column_index("truth"),
              mean = table.column_index("GP_SE-ARD_mean");
    QVERIFY(context >= 0 && truth >= 0 && mean >= 0);
    double context_count = 0.0;
    for (const auto& row : table.rows) {
      context_count += row[size_t(context)];
      QVERIFY(std::isfinite(row[size_t(mean)]));
    }
    QCOMPARE(int(context_count), m_explorer->mask()->count());
    // Row-major pixels: the truth column is the displayed picture.
    const auto shown = m_explorer->displayedTruth();
    const int p = 30 * ImageExplorer::kFashionMnistCanvas + 27;
    QVERIFY(std::abs(table.rows[size_t(p)][size_t(truth)] - shown[30][27].item<double>()) < 1e-6);
  }

  void paintEraseAndUndoWithTheMouse() {
    auto* canvas = m_explorer->canvas();
    auto* undo = m_explorer->undoStack();
    m_explorer->findChild<QSpinBox*>();  // the panel is built
    undo->push(new npe::widgets::ReplaceMaskCommand(m_explorer->mask(), {}, "clear"));
    canvas->setBrushSize(1);
    const int steps_before = undo->count();
    // One drag over three pixels: three painted pixels, one undo step.
    send_mouse(canvas, QEvent::MouseButtonPress, pixel_centre(canvas, 20, 20), Qt::LeftButton,
               Qt::LeftButton);
    send_mouse(canvas, QEvent::MouseMove, pixel_centre(canvas, 20, 21), Qt::NoButton,
               Qt::LeftButton);
    send_mouse(canvas, QEvent::MouseMove, pixel_centre(canvas, 20, 22), Qt::NoButton,
               Qt::LeftButton);
    send_mouse(canvas, QEvent::MouseButtonRelease, pixel_centre(canvas, 20, 22), Qt::LeftButton,
               Qt::NoButton);
    QCOMPARE(m_explorer->mask()->count(), 3);
    QVERIFY(m_explorer->mask()->at(20 * 56 + 21));
    QCOMPARE(undo->count(), steps_before + 1);
    // The right button erases.
    send_mouse(canvas, QEvent::MouseButtonPress, pixel_centre(canvas, 20, 21), Qt::RightButton,
               Qt::RightButton);
    send_mouse(canvas, QEvent::MouseButtonRelease, pixel_centre(canvas, 20, 21), Qt::RightButton,
               Qt::NoButton);
    QCOMPARE(m_explorer->mask()->count(), 2);
    QVERIFY(!m_explorer->mask()->at(20 * 56 + 21));
    undo->undo();
    QCOMPARE(m_explorer->mask()->count(), 3);
    undo->undo();
    QCOMPARE(m_explorer->mask()->count(), 0);
    undo->redo();
    QCOMPARE(m_explorer->mask()->count(), 3);
    // A larger brush paints a square.
    canvas->setBrushSize(3);
    send_mouse(canvas, QEvent::MouseButtonPress, pixel_centre(canvas, 40, 40), Qt::LeftButton,
               Qt::LeftButton);
    send_mouse(canvas, QEvent::MouseButtonRelease, pixel_centre(canvas, 40, 40), Qt::LeftButton,
               Qt::NoButton);
    QCOMPARE(m_explorer->mask()->count(), 3 + 9);
  }

  void translationMovesThePictureAndItsContext() {
    auto* canvas = m_explorer->canvas();
    m_explorer->undoStack()->push(
        new npe::widgets::ReplaceMaskCommand(m_explorer->mask(), {28 * 56 + 28}, "one pixel"));
    m_explorer->setTranslation(3, -2);
    QCOMPARE(m_explorer->translationH(), 3);
    QCOMPARE(m_explorer->translationV(), -2);
    // Painting at a displayed pixel marks the base pixel under it (displayed minus Δ).
    canvas->setBrushSize(1);
    send_mouse(canvas, QEvent::MouseButtonPress, pixel_centre(canvas, 10, 10), Qt::LeftButton,
               Qt::LeftButton);
    send_mouse(canvas, QEvent::MouseButtonRelease, pixel_centre(canvas, 10, 10), Qt::LeftButton,
               Qt::NoButton);
    QVERIFY(m_explorer->mask()->at((10 + 2) * 56 + (10 - 3)));
    // The displayed truth is the picture moved by Δ.
    auto base = npe::place_on_canvas(m_explorer->source().pixels, 56, 0, 0);
    auto shown = m_explorer->displayedTruth();
    QVERIFY(
        torch::equal(shown.slice(0, 0, 54).slice(1, 3, 56), base.slice(0, 2, 56).slice(1, 0, 53)));
    // Arrow keys translate too; the range is clamped.
    QTest::keyClick(m_explorer.get(), Qt::Key_Right);
    QCOMPARE(m_explorer->translationH(), 4);
    m_explorer->setTranslation(100, -100);
    QCOMPARE(m_explorer->translationH(), m_explorer->maxTranslation());
    QCOMPARE(m_explorer->translationV(), -m_explorer->maxTranslation());
  }

  // Checkpoints go to the tab of the task they were trained on, not merely to a tab whose models
  // have the same D_x and D_y: a 2-D model of another task stays out of the Images tab; one
  // that records no task (imported, older) is placed by its dimensions.
  void checkpointsAreRoutedByTheirTask() {
    npe::CheckpointMetadata metadata;
    metadata.model.dim_x = 2;
    metadata.model.dim_y = 1;
    metadata.task = {{"kind", "image"}};
    QVERIFY(m_explorer->acceptsCheckpoint(metadata));
    metadata.task = {{"kind", "gp1d"}};
    QVERIFY(!m_explorer->acceptsCheckpoint(metadata));
    metadata.task = nlohmann::json();
    QVERIFY(m_explorer->acceptsCheckpoint(metadata));
    metadata.model.dim_y = 3;  // colour pictures
    QVERIFY(m_explorer->acceptsCheckpoint(metadata));
    metadata.model.dim_y = 2;
    QVERIFY(!m_explorer->acceptsCheckpoint(metadata));
    metadata.model.dim_x = 1;
    metadata.model.dim_y = 1;
    metadata.task = {{"kind", "image"}};
    QVERIFY(!npe::widgets::checkpoint_fits_tab(metadata, {"gp1d"}, 1, {1}));
    metadata.task = {{"kind", "gp1d"}};
    QVERIFY(npe::widgets::checkpoint_fits_tab(metadata, {"gp1d"}, 1, {1}));
  }

  void heteroscedasticModelsAreNamedApartFromTheirTwins() {
    QTemporaryDir dir;
    npe::ImageTaskConfig task;
    npe::ImageTaskSource source(task);
    auto config = npe::default_model_config("pttnp", "small", source);
    config.heteroscedastic = true;
    const auto path = save_untrained(dir, "pttnp-het.pt", config, source);
    m_explorer->openCheckpoint(path);
    const auto* entry = m_explorer->modelList()->find(QFileInfo(path).absoluteFilePath());
    QVERIFY(entry);
    QVERIFY2(entry->name.contains("σ per pixel"), qPrintable(entry->name));
    m_explorer->openCheckpoint(write_image_checkpoint(dir));  // homoscedastic
    const auto* twin = m_explorer->modelList()->find(
        QFileInfo(dir.filePath("convcnp2d-tiny.pt")).absoluteFilePath());
    QVERIFY(twin);
    QVERIFY2(!twin->name.contains("σ per pixel"), qPrintable(twin->name));
  }

  void predictionsMetricsAndHover() {
    QTemporaryDir dir;
    m_explorer->openCheckpoint(write_image_checkpoint(dir));
    m_explorer->setTranslation(5, 5);
    QVERIFY(wait_for_refined_round(*m_explorer));
    auto* grid = m_explorer->predictions();
    QCOMPARE(grid->rowCount(), 1);
    // The paper's image models are homoscedastic: the grid says so instead of a flat image.
    QVERIFY2(grid->rowText(0).contains("constant σ"), qPrintable(grid->rowText(0)));
    const auto id = m_explorer->modelList()->enabledIds().front();
    const auto ll = m_explorer->metrics()->cellText(id, 1);
    bool ok = false;
    QVERIFY(std::isfinite(ll.toDouble(&ok)) && ok);
    // The on-grid ConvCNP is exactly equivariant to whole-pixel translations.
    const auto equivariance = m_explorer->metrics()->cellText(id, 2).toDouble(&ok);
    QVERIFY2(ok && equivariance < 1e-4, qPrintable(m_explorer->metrics()->cellText(id, 2)));
    const auto text = m_explorer->describePixel(28, 28);
    QVERIFY2(text.contains("ConvCNP") && text.contains("±"), qPrintable(text));
    // An image model that cannot be read is refused with a clear error, nothing changes.
    QFile bad(dir.filePath("bad.pt"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("not a checkpoint");
    bad.close();
    QVERIFY_THROWS_EXCEPTION(npe::Error, m_explorer->openCheckpoint(dir.filePath("bad.pt")));
    QCOMPARE(m_explorer->modelList()->enabledIds().size(), 1);
  }

  // Issue 107 §1: a model that is not translation equivariant, moved further than its training
  // translations, is flagged beside its pictures and in its metrics row; a TE model is not.
  void guardrailsFlagTranslationsBeyondTrainingForModelsThatAreNotEquivariant() {
    QTemporaryDir dir;
    m_explorer->openCheckpoint(write_image_checkpoint(dir));  // ConvCNP: equivariant
    const auto convcnp = m_explorer->modelList()->enabledIds().last();
    npe::ImageTaskConfig task;
    task.name = "tfmnist-central";
    task.train_max_translation = 4;
    npe::ImageTaskSource source(task);
    auto config = npe::default_model_config("pttnp", "small", source);
    config.options<npe::TransformerOptions>().dim_model = 16;
    config.options<npe::TransformerOptions>().num_layers = 1;
    config.options<npe::TransformerOptions>().num_heads = 2;
    config.options<npe::TransformerOptions>().head_dim = 8;
    config.options<npe::PseudoTokenOptions>().num_pseudo_tokens = 4;
    m_explorer->openCheckpoint(save_untrained(dir, "pttnp-tiny.pt", config, source));
    const auto pttnp = m_explorer->modelList()->enabledIds().last();
    auto row_text = [&](const QString& id) {
      const auto ids = m_explorer->modelList()->enabledIds();
      return m_explorer->predictions()->rowText(int(ids.indexOf(id)));
    };
    m_explorer->setTranslation(3, -4);  // within |Δ| <= 4: nothing to say
    QVERIFY(wait_for_refined_round(*m_explorer));
    QVERIFY2(!row_text(pttnp).contains("outside training"), qPrintable(row_text(pttnp)));
    m_explorer->setTranslation(0, 9);
    QVERIFY(wait_for_refined_round(*m_explorer));
    QVERIFY2(row_text(pttnp).contains(  // rich text: ">" is written "&gt;"
                 "outside training: Δ beyond the training translations: |Δ| = 9 &gt; 4"),
             qPrintable(row_text(pttnp)));
    QVERIFY2(m_explorer->metrics()->cellText(pttnp, 0).contains("outside training"),
             qPrintable(m_explorer->metrics()->cellText(pttnp, 0)));
    QVERIFY2(!row_text(convcnp).contains("outside training"), qPrintable(row_text(convcnp)));
    QVERIFY2(!m_explorer->metrics()->cellText(convcnp, 0).contains("outside training"),
             qPrintable(m_explorer->metrics()->cellText(convcnp, 0)));
  }

  void sessionRoundTripRestoresTheState() {
    if (npe::widgets::test_image_count() == 0) QSKIP("Fashion-MNIST is not installed");
    QTemporaryDir dir;
    const auto checkpoint = write_image_checkpoint(dir);
    m_explorer->openCheckpoint(checkpoint);
    m_explorer->showTestImage(12);
    m_explorer->randomContext(5);
    m_explorer->setTranslation(-4, 7);
    const auto saved = m_explorer->saveSection();
    const auto context = m_explorer->mask()->indices();

    ImageExplorer other;
    other.restoreSection(saved);
    QCOMPARE(other.source().test_index, 12);
    QCOMPARE(other.mask()->indices(), context);
    QCOMPARE(other.translationH(), -4);
    QCOMPARE(other.translationV(), 7);
    QVERIFY(other.modelList()->enabledIds().contains(QFileInfo(checkpoint).absoluteFilePath()));
    // A broken section changes nothing.
    auto broken = saved;
    broken["translation"] = QJsonArray{99, 0};
    QVERIFY_THROWS_EXCEPTION(npe::DataError, other.restoreSection(broken));
    QCOMPARE(other.translationH(), -4);
    QCOMPARE(other.mask()->indices(), context);
  }

  void ownPicturesLoadAndUnreadableFilesLeaveTheStateIntact() {
    QTemporaryDir dir;
    // A dark square on a white page, 40 x 20: fitted into 28 x 14 and inverted.
    QImage picture(40, 20, QImage::Format_RGB32);
    picture.fill(Qt::white);
    for (int y = 5; y < 15; ++y) {
      for (int x = 10; x < 30; ++x) picture.setPixel(x, y, qRgb(0, 0, 0));
    }
    const auto path = dir.filePath("mine.png");
    QVERIFY(picture.save(path));
    m_explorer->openDataFile(path);
    QCOMPARE(m_explorer->source().test_index, -1);
    const auto pixels = m_explorer->source().pixels;
    QCOMPARE(pixels.size(0), 28);
    QVERIFY(pixels[14][14].item<float>() > 0.9f);  // the square, inverted to bright
    QVERIFY(pixels[0][0].item<float>() < 0.1f);    // padding is background
    QVERIFY(pixels[10][2].item<float>() < 0.1f);   // the white page, inverted to dark

    QFile junk(dir.filePath("junk.png"));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("this is not a PNG");
    junk.close();
    const auto mask = m_explorer->mask()->indices();
    QVERIFY_THROWS_EXCEPTION(npe::DataError, m_explorer->openDataFile(dir.filePath("junk.png")));
    QCOMPARE(m_explorer->source().file_path, path);
    QVERIFY(torch::equal(m_explorer->source().pixels, pixels));
    QCOMPARE(m_explorer->mask()->indices(), mask);
  }

  // Issue 104 §4: a model trained on the user's colour pictures opens with its data: the canvas,
  // picture size and channels become theirs, the grey models step aside, predictions are in
  // colour (σ per channel, its mean drawn), the read-outs give every channel; Fashion-MNIST
  // is one choice away and brings the grey canvas back; a session keeps whose pictures.
  void aColourPicturesModelOpensWithItsPictures() {
    if (npe::widgets::test_image_count() == 0) QSKIP("Fashion-MNIST is not installed");
    QTemporaryDir dir;
    const auto grey_model = write_image_checkpoint(dir);
    m_explorer->openCheckpoint(grey_model);
    const auto path = write_colour_pictures_checkpoint(dir);
    m_explorer->openCheckpoint(path);
    const auto colour_id = m_explorer->modelList()->enabledIds().back();
    QCOMPARE(m_explorer->collection(), colour_id);
    QCOMPARE(m_explorer->canvasSide(), 16);
    QCOMPARE(m_explorer->source().channels(), 3);
    QCOMPARE(m_explorer->source().side(), 8);
    QCOMPARE(m_explorer->maxTranslation(), 4);
    QCOMPARE(m_explorer->displayedTruth().sizes(), (std::vector<int64_t>{16, 16, 3}));
    // The grey model cannot run on colour: switched off.
    QCOMPARE(m_explorer->modelList()->enabledIds(), QStringList{colour_id});
    QCOMPARE(m_explorer->mask()->side(), 16);
    QVERIFY(m_explorer->mask()->count() > 0);
    QVERIFY(wait_for_refined_round(*m_explorer));
    const auto table = m_explorer->predictionTable();
    QCOMPARE(int(table.rows.size()), 16 * 16);
    for (const char* column : {"truth_r", "truth_g", "truth_b", "context"}) {
      QVERIFY2(std::find(table.columns.begin(), table.columns.end(), column) != table.columns.end(),
               column);
    }
    QCOMPARE(int(table.columns.size()), 2 + 3 + 1 + 6);
    for (const auto& row : table.rows) {
      for (double v : row) QVERIFY(std::isfinite(v));
    }
    bool ok = false;
    QVERIFY(std::isfinite(m_explorer->metrics()->cellText(colour_id, 1).toDouble(&ok)) && ok);
    const auto text = m_explorer->describePixel(8, 8);
    QVERIFY2(text.contains("true value (") && text.count(", ") >= 4, qPrintable(text));
    QVERIFY2(m_explorer->predictions()->rowText(0).contains("ConvCNP"),
             qPrintable(m_explorer->predictions()->rowText(0)));
    // A picture file opens in the shown pictures' size and colour.
    QImage photo(30, 20, QImage::Format_RGB888);
    photo.fill(QColor(200, 30, 10));
    const auto photo_path = dir.filePath("photo.png");
    QVERIFY(photo.save(photo_path));
    m_explorer->openDataFile(photo_path);
    QCOMPARE(m_explorer->source().channels(), 3);
    QCOMPARE(m_explorer->source().side(), 8);
    QVERIFY(std::abs(m_explorer->source().pixels[4][4][0].item<float>() - 200 / 255.0f) < 0.02);
    // A session keeps whose pictures set the canvas.
    m_explorer->showTestImage(2);
    const auto section = m_explorer->saveSection();
    QCOMPARE(section.value("source").toObject().value("collection").toString(), colour_id);

    // Back to Fashion-MNIST: the grey canvas, and the colour model steps aside.
    m_explorer->showCollection({});
    QCOMPARE(m_explorer->canvasSide(), 56);
    QCOMPARE(m_explorer->source().channels(), 1);
    QVERIFY(!m_explorer->modelList()->enabledIds().contains(colour_id));
    // Switching it on again brings its pictures back.
    m_explorer->setModelEnabled(colour_id, true);
    QCOMPARE(m_explorer->collection(), colour_id);
    QCOMPARE(m_explorer->canvasSide(), 16);
    m_explorer->showCollection({});
    m_explorer->restoreSection(section);
    QCOMPARE(m_explorer->collection(), colour_id);
    QCOMPARE(m_explorer->source().test_index, 2);
    QCOMPARE(m_explorer->canvasSide(), 16);
    QVERIFY(wait_for_refined_round(*m_explorer));
    QCOMPARE(int(m_explorer->predictionTable().rows.size()), 16 * 16);
  }

  void exportWritesEveryFormat() {
    QTemporaryDir dir;
    for (const auto* name : {"view.png", "view.pdf", "view.svg"}) {
      const auto file = dir.filePath(name);
      m_explorer->exportView(file);
      QVERIFY2(QFileInfo(file).size() > 1000, name);
    }
    QVERIFY_THROWS_EXCEPTION(npe::Error, m_explorer->exportView(dir.filePath("view.gifx")));
  }

  void sessionFilesHaveOneSectionPerTabAndVersionOneStillOpens() {
    QTemporaryDir dir;
    npe::widgets::SessionFile file;
    file.current_tab = "images";
    file.tabs["images"] = m_explorer->saveSection();
    file.tabs["functions"] = QJsonObject{{"shift", 0.5}};
    const auto path = dir.filePath("both.json");
    npe::widgets::write_session_file(path, file);
    const auto read = npe::widgets::read_session_file(path);
    QCOMPARE(read.current_tab, QString("images"));
    QCOMPARE(read.tabs.value("images").toObject(), file.tabs.value("images").toObject());
    // A version-1 file (the 1-D explorer's state at the top level) opens as its section.
    QJsonObject v1{{"format", "np-explorer-session"}, {"version", 1}, {"shift", 1.25}};
    const auto old = npe::widgets::session_from_json(v1);
    QCOMPARE(old.current_tab, QString("functions"));
    QCOMPARE(old.tabs.value("functions").toObject().value("shift").toDouble(), 1.25);
    v1["version"] = 3;
    QVERIFY_THROWS_EXCEPTION(npe::DataError, npe::widgets::session_from_json(v1));
    QVERIFY_THROWS_EXCEPTION(npe::DataError,
                             npe::widgets::session_from_json(QJsonObject{{"format", "other"}}));
  }

 private:
  std::unique_ptr<ImageExplorer> m_explorer;
};

QTEST_MAIN(ImageExplorerTest)
#include "image_explorer_test.moc"
