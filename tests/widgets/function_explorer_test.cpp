// GUI tests of the 1-D explorer: simulated mouse edits, undo/redo, the Δ shift, predictions
// for every enabled model, sessions, export and request coalescing.

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimeZone>
#include <QUndoStack>
#include <QtTest>

#include "../file_size_limit.h"
#include "common/episode_box.h"
#include "common/explorer_panel.h"
#include "common/metrics_table.h"
#include "common/model_list.h"
#include "common/prediction_service.h"
#include "common/shift_control.h"
#include "common/truth_episode.h"
#include "function1d/context_editor.h"
#include "function1d/episode_runner.h"
#include "function1d/function_explorer.h"
#include "function1d/function_plot.h"
#include "function1d/function_session.h"
#include "function1d/ground_truth_box.h"
#include "function1d/kernel_posterior_box.h"
#include "function1d/model_presets.h"
#include "function1d/observation_suggester.h"
#include "function1d/point_set.h"
#include "function1d/suggestion_box.h"
#include "function1d/sweep_dialog.h"
#include "npe/data/gp_oracle.h"
#include "npe/data/gp_tasks.h"
#include "npe/data/point_table.h"
#include "npe/data/series_tasks.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "npe/models/size_preset.h"
#include "npe/predictors/gp.h"

using npe::widgets::FunctionExplorer;

namespace {

torch::Tensor column(const std::vector<float>& values) {
  return torch::tensor(values).view({1, -1, 1});
}

npe::SizePreset tiny_tetnp_sizes() {
  npe::SizePreset sizes;
  sizes.dim_model = 16;
  sizes.num_layers = 1;
  sizes.pairwise_width = 8;
  return sizes;
}

// A small untrained TE-TNP checkpoint, so the tests do not depend on shipped weights.
QString write_checkpoint(const QTemporaryDir& dir, const std::string& kind) {
  npe::ModelConfig config = npe::default_model_config(kind, "small");
  tiny_tetnp_sizes().apply_to(config);
  auto model = npe::make_model(config);
  npe::CheckpointMetadata metadata;
  metadata.model = config;
  const auto path = dir.filePath(QString::fromStdString(kind) + ".pt");
  npe::save_checkpoint(path.toStdString(), *model, metadata);
  return path;
}

void send_mouse(QWidget* widget, QEvent::Type type, QPointF pixel, Qt::MouseButton button,
                Qt::MouseButtons buttons) {
  QMouseEvent event(type, pixel, widget->mapToGlobal(pixel), button, buttons, Qt::NoModifier);
  QApplication::sendEvent(widget, &event);
}

using npe::testing::ProcessFileSizeLimit;

QByteArray read_all(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool wait_for_refined_round(FunctionExplorer& explorer, int timeout_ms = 60000) {
  QSignalSpy spy(&explorer, &FunctionExplorer::predictionsUpdated);
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < timeout_ms) {
    if (!spy.wait(timeout_ms - timer.elapsed())) return false;
    for (const auto& args : spy) {
      if (args.at(0).toBool()) return true;
    }
  }
  return false;
}

}  // namespace

class FunctionExplorerTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() {
    m_explorer = std::make_unique<FunctionExplorer>();
    m_explorer->resize(1200, 800);
    m_explorer->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_explorer.get()));
    m_explorer->undoStack()->push(
        new npe::widgets::ReplacePointsCommand(m_explorer->points(), {}, "clear"));
    m_explorer->undoStack()->clear();
    m_explorer->fitView();
    m_explorer->plot()->replot();
  }
  void cleanup() { m_explorer.reset(); }

  void theSidePanelNeedsNoHorizontalScrollBar() {
    // A horizontal scroll bar covered the panel's last row and cut its right edge.
    auto* scroll = m_explorer->findChild<QScrollArea*>();
    QVERIFY(scroll);
    QVERIFY(scroll->isVisible());
    // The panel follows its controls on a later pass of the event loop (the metrics table
    // widens when figures arrive): wait for the layout to settle.
    QTRY_VERIFY(!scroll->horizontalScrollBar()->isVisible());
    QTRY_VERIFY(scroll->viewport()->width() >= scroll->widget()->minimumSizeHint().width());
  }

  void clickAddsMovesAndRemovesPointsWithUndo() {
    auto* plot = m_explorer->plot();
    auto* points = m_explorer->points();
    const QPointF target(0.5, 1.0);
    QTest::mouseClick(plot, Qt::LeftButton, {}, plot->toPixel(target).toPoint());
    QCOMPARE(points->size(), 1);
    QVERIFY(std::abs(points->points()[0].x() - 0.5) < 0.05);
    QVERIFY(std::abs(points->points()[0].y() - 1.0) < 0.05);

    // Drag it to (-1, -0.5).
    const QPointF start = plot->toPixel(points->points()[0]);
    const QPointF end = plot->toPixel({-1.0, -0.5});
    send_mouse(plot, QEvent::MouseButtonPress, start, Qt::LeftButton, Qt::LeftButton);
    for (int i = 1; i <= 5; ++i) {
      send_mouse(plot, QEvent::MouseMove, start + (end - start) * i / 5.0, Qt::NoButton,
                 Qt::LeftButton);
    }
    send_mouse(plot, QEvent::MouseButtonRelease, end, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(points->size(), 1);
    QVERIFY(std::abs(points->points()[0].x() + 1.0) < 0.05);
    QVERIFY(std::abs(points->points()[0].y() + 0.5) < 0.05);

    // Right click removes it.
    QTest::mouseClick(plot, Qt::RightButton, {}, end.toPoint());
    QCOMPARE(points->size(), 0);

    // Undo: the removal, then the whole drag in one step, then the addition.
    auto* undo = m_explorer->undoStack();
    undo->undo();
    QCOMPARE(points->size(), 1);
    QVERIFY(std::abs(points->points()[0].x() + 1.0) < 0.05);
    undo->undo();
    QVERIFY(std::abs(points->points()[0].x() - 0.5) < 0.05);
    undo->undo();
    QCOMPARE(points->size(), 0);
    undo->redo();
    undo->redo();
    QCOMPARE(points->size(), 1);
    QVERIFY(std::abs(points->points()[0].x() + 1.0) < 0.05);
  }

  void deleteKeyRemovesThePointUnderTheMouse() {
    auto* plot = m_explorer->plot();
    QTest::mouseClick(plot, Qt::LeftButton, {}, plot->toPixel({1.0, 0.0}).toPoint());
    QCOMPARE(m_explorer->points()->size(), 1);
    send_mouse(plot, QEvent::MouseMove, plot->toPixel(m_explorer->points()->points()[0]),
               Qt::NoButton, Qt::NoButton);
    QTest::keyClick(plot, Qt::Key_Delete);
    QCOMPARE(m_explorer->points()->size(), 0);
  }

  void resampleDrawsTheNextFunctionAndSettingsKeepItsSeed() {
    npe::widgets::GroundTruthBox box;
    QSignalSpy changed(&box, &npe::widgets::GroundTruthBox::truthChanged);
    const auto first = box.truth().spec().seed;
    const double before = box.truth().value(0.3);
    auto* resample = box.findChild<QPushButton*>();
    QVERIFY(resample && resample->text().contains("Resample"));
    resample->click();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(box.truth().spec().seed, first + 1);
    QVERIFY(box.truth().value(0.3) != before);
    // A new noise level keeps the function (same seed): only the observations change.
    const double resampled = box.truth().value(0.3);
    auto* noise = box.findChildren<QDoubleSpinBox*>().at(1);
    noise->setValue(0.5);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(box.truth().spec().seed, first + 1);
    QCOMPARE(box.truth().spec().noise_std, 0.5);
    QCOMPARE(box.truth().value(0.3), resampled);
  }

  void editsIgnoreNonFiniteCoordinatesAndBadIndices() {
    npe::widgets::ContextEditor editor;
    editor.setShift(2.0);
    editor.add({2.5, 1.0});
    QCOMPARE(editor.points()->points().at(0), QPointF(0.5, 1.0));  // kept at Δ = 0
    QCOMPARE(editor.shown().at(0), QPointF(2.5, 1.0));
    editor.add({std::nan(""), 1.0});
    editor.move(0, {1.0, std::numeric_limits<double>::infinity()}, 1);
    editor.move(3, {1.0, 1.0}, 1);
    editor.remove(-1);
    QCOMPARE(editor.points()->size(), 1);
    QCOMPARE(editor.points()->points().at(0), QPointF(0.5, 1.0));
    QCOMPARE(editor.undoStack()->count(), 1);
    editor.replace({{3.0, 0.0}}, true, "import");
    QCOMPARE(editor.points()->points().at(0), QPointF(1.0, 0.0));
    editor.undoStack()->undo();
    QCOMPARE(editor.points()->points().at(0), QPointF(0.5, 1.0));
  }

  void shiftTranslatesTheContext() {
    m_explorer->sampleContext(5);
    const auto base = m_explorer->points()->points();
    m_explorer->setShift(1.5);
    QCOMPARE(m_explorer->shift(), 1.5);
    QCOMPARE(m_explorer->points()->points(), base);  // stored unshifted
    auto* plot = m_explorer->plot();
    plot->replot();
    for (const auto& p : base) {
      QVERIFY(plot->pointAt(plot->toPixel({p.x() + 1.5, p.y()})) >= 0);
    }
    // A click at a display position stores the point unshifted.
    QTest::mouseClick(plot, Qt::LeftButton, {}, plot->toPixel({2.5, 2.0}).toPoint());
    QVERIFY(std::abs(m_explorer->points()->points().back().x() - 1.0) < 0.05);
    // Absurd values are clamped to the control's range, never applied.
    m_explorer->setShift(1e9);
    QCOMPARE(m_explorer->shift(), 1e6);
    m_explorer->setShift(std::nan(""));
    QCOMPARE(m_explorer->shift(), 1e6);
  }

  // Regression: typing "1.75" used to give 1.00 (each keystroke was applied and written back).
  void typedShiftIsAppliedOnEnter() {
    auto* box = m_explorer->findChild<npe::widgets::ShiftControl*>()->findChild<QDoubleSpinBox*>();
    QVERIFY(box);
    box->setFocus();
    box->selectAll();
    QTest::keyClicks(box, "1.75");
    QCOMPARE(m_explorer->shift(), 0.0);  // nothing applied while typing
    QTest::keyClick(box, Qt::Key_Return);
    QCOMPARE(m_explorer->shift(), 1.75);
  }

  void csvImportReplacesTheContextUndoably() {
    QTemporaryDir dir;
    const auto path = dir.filePath("mine.csv");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("t,y,x\n0,1.5,-1\n1,nan,0\n2,0.5,1\n3,oops,2\n");
    file.close();
    QSignalSpy status(m_explorer.get(), &FunctionExplorer::statusMessage);
    const auto before = m_explorer->points()->points();
    m_explorer->openDataFile(path);
    const auto& points = m_explorer->points()->points();
    QCOMPARE(points.size(), size_t(2));  // the NaN row and the bad row are skipped
    QCOMPARE(points[0], QPointF(-1, 1.5));
    QCOMPARE(points[1], QPointF(1, 0.5));
    bool reported = false;
    for (const auto& args : status) {
      const auto text = args.at(0).toString();
      reported = reported || (text.contains("1 NaN row") && text.contains("line 5"));
    }
    QVERIFY(reported);
    m_explorer->undoStack()->undo();
    QCOMPARE(m_explorer->points()->points(), before);
    // Unreadable files leave the context as it was.
    QVERIFY_THROWS_EXCEPTION(npe::DataError, m_explorer->openDataFile(dir.filePath("none.csv")));
    QCOMPARE(m_explorer->points()->points(), before);
  }

  void exportPredictionsWritesTheGridAndTheHeldOutPoints() {
    QTemporaryDir dir;
    const auto out = dir.filePath("predictions.csv");
    // Nothing drawn yet from this explorer's rounds in full: a clear error, no file.
    npe::widgets::FunctionExplorer fresh;
    QVERIFY_THROWS_EXCEPTION(npe::DataError, fresh.exportPredictions(out));
    QVERIFY(!QFileInfo::exists(out));

    m_explorer->sampleContext(8);
    QVERIFY(wait_for_refined_round(*m_explorer));
    m_explorer->exportPredictions(out);
    const auto table = npe::read_point_table(out.toStdString());
    QVERIFY(table.warnings.empty());
    const int x = table.column_index("x"), y = table.column_index("y"),
              held = table.column_index("held_out"),
              mean = table.column_index("GP_true_kernel_mean"),
              sd = table.column_index("GP_true_kernel_std");
    QVERIFY(x >= 0 && y >= 0 && held >= 0 && mean >= 0 && sd >= 0);
    int grid = 0, held_out = 0;
    for (const auto& row : table.rows) {
      QVERIFY(std::isfinite(row[size_t(x)]));
      QVERIFY(std::isfinite(row[size_t(mean)]));
      QVERIFY(row[size_t(sd)] > 0.0);
      if (row[size_t(held)] == 1.0) {
        ++held_out;
        QVERIFY(std::isfinite(row[size_t(y)]));
      } else {
        ++grid;
        QVERIFY(std::isnan(row[size_t(y)]));
      }
    }
    QCOMPARE(held_out, 100);
    QVERIFY(grid >= 256);
    // The grid comes first, in ascending x, spanning the plotted range.
    for (int i = 1; i < grid; ++i)
      QVERIFY(table.rows[size_t(i)][size_t(x)] > table.rows[size_t(i - 1)][size_t(x)]);
    const auto range = m_explorer->plot()->xAxis->range();
    QVERIFY(std::abs(table.rows.front()[size_t(x)] - range.lower) < 1e-6);
    QVERIFY(std::abs(table.rows[size_t(grid - 1)][size_t(x)] - range.upper) < 1e-6);
  }

  // A snapshot of an unfinished run is "training" when the user opens it, but shipped as a
  // default it is named like any model, with where it stopped in its tooltip.
  void shippedSnapshotsOfUnfinishedRunsAreNotLabelledTraining() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath("gp1d"));
    npe::ModelConfig config = npe::default_model_config("tetnp", "small");
    tiny_tetnp_sizes().apply_to(config);
    npe::CheckpointMetadata metadata;
    metadata.model = config;
    metadata.steps = 530;
    metadata.planned_steps = 600;
    const auto path = dir.filePath("gp1d/tetnp.pt");
    npe::save_checkpoint(path.toStdString(), *npe::make_model(config), metadata);

    const auto opened = npe::widgets::load_model_entry(path, Qt::red);
    QVERIFY2(opened.name.contains("training, step 530 of 600"), qPrintable(opened.name));
    const auto previous = qgetenv("NPE_MODELS_DIR");
    qputenv("NPE_MODELS_DIR", dir.path().toUtf8());
    const auto shipped = npe::widgets::shipped_entries("gp1d", 0);
    qputenv("NPE_MODELS_DIR", previous);
    QCOMPARE(shipped.size(), size_t(1));
    QCOMPARE(shipped[0].name, QString("TE-TNP"));
    QVERIFY2(shipped[0].tooltip.contains("530 steps") &&
                 shipped[0].tooltip.contains("stopped there in a 600-step run"),
             qPrintable(shipped[0].tooltip));
  }

  // A researcher's own model, scripted by PyTorch: drawn like the project's, its samples too
  // when it returns a covariance.
  void torchScriptModelsAreDrawn() {
    const QDir models(qEnvironmentVariable("NPE_TORCHSCRIPT_MODELS_DIR"));
    if (models.path().isEmpty() || !models.exists("te_np.pt"))
      QSKIP("no TorchScript test models (python3 cannot import torch)");
    const auto diagonal = models.absoluteFilePath("te_np.pt");
    const auto joint = models.absoluteFilePath("joint_np.pt");
    m_explorer->openCheckpoint(diagonal);
    m_explorer->openCheckpoint(joint);
    m_explorer->setSamples(3);
    m_explorer->sampleContext(6);
    QVERIFY(wait_for_refined_round(*m_explorer));
    auto* plot = m_explorer->plot();
    QVERIFY(plot->hasCurve(diagonal));
    QVERIFY(plot->hasCurve(joint));
    QCOMPARE(plot->sampleLineCount(joint), 3);
    QCOMPARE(plot->sampleLineCount(diagonal), 0);
    bool named = false;
    for (const auto& entry : m_explorer->models()) named = named || entry.name == "Test TE-NP";
    QVERIFY(named);
    m_explorer->setSamples(0);

    // A session remembers it, and a fresh tab opens it again from the session.
    QTemporaryDir dir;
    const auto file = dir.filePath("session.json");
    m_explorer->saveSession(file);
    m_explorer = std::make_unique<FunctionExplorer>();
    m_explorer->loadSession(file);
    bool restored = false;
    for (const auto& entry : m_explorer->models())
      restored = restored || (entry.name == "Test TE-NP" && entry.checkpoint_path == diagonal);
    QVERIFY(restored);
  }

  void predictionsArriveForEveryEnabledModel() {
    QTemporaryDir dir;
    const auto path = write_checkpoint(dir, "tetnp");
    m_explorer->openCheckpoint(path);
    m_explorer->setModelEnabled("gp-fitted", true);
    m_explorer->sampleContext(8);
    QVERIFY(wait_for_refined_round(*m_explorer));
    auto* plot = m_explorer->plot();
    QVERIFY(plot->hasCurve("gp-oracle"));
    QVERIFY(plot->hasCurve("gp-fitted"));
    QVERIFY(plot->hasCurve(QFileInfo(path).absoluteFilePath()));
    // Disabling a model removes its curve.
    m_explorer->setModelEnabled("gp-fitted", false);
    QVERIFY(!plot->hasCurve("gp-fitted"));
  }

  // The kernel posterior of GP (Bayes over kernels) is shown while that model is on, and says
  // what the context says: 60 points of a periodic function leave no doubt about the family,
  // and the period found is near the truth's. Switching the model off hides it.
  void kernelPosteriorFollowsGpBayes() {
    auto* box = m_explorer->kernelPosterior();
    QVERIFY(box->isHidden());
    auto s = m_explorer->session();
    s.has_truth = true;
    s.truth.kernel = npe::KernelKind::Periodic;
    s.truth.lengthscale = 0.5;
    s.enabled_models = {"gp-bayes"};
    m_explorer->applySession(s);
    m_explorer->sampleContext(60);
    QVERIFY(wait_for_refined_round(*m_explorer));
    QVERIFY(!box->isHidden());
    const auto& posterior = box->posterior();
    QVERIFY(posterior.has_value());
    QCOMPARE(posterior->families.size(), size_t(3));
    double total = 0.0;
    for (const auto& family : posterior->families) total += family.probability;
    QVERIFY(std::abs(total - 1.0) < 1e-9);
    const auto& best = posterior->families[posterior->most_probable()];
    QCOMPARE(best.kind, npe::KernelKind::Periodic);
    QVERIFY2(best.probability > 0.99, qPrintable(box->summary()));
    QVERIFY2(std::abs(std::log(best.median_scale / 0.5)) < 0.05, qPrintable(box->summary()));
    QVERIFY2(box->summary().contains("60 context points"), qPrintable(box->summary()));
    QVERIFY2(box->summary().contains("Periodic"), qPrintable(box->summary()));
    m_explorer->setModelEnabled("gp-bayes", false);
    QVERIFY(box->isHidden());
    QVERIFY(!box->posterior().has_value());
  }

  // The tab opens on its teaching preset; a preset switches exactly its models on (skipping
  // shipped models the tab does not have), a hand edit shows as "Custom selection", and an
  // unknown name changes nothing.
  void presetsSwitchModelSetsAndFollowHandEdits() {
    auto* presets = m_explorer->presets();
    const auto& all = npe::widgets::function_model_presets();
    QCOMPARE(presets->currentText(), all.front().name);
    const auto ideal = all.at(1).name;
    QVERIFY(presets->apply(ideal));
    QStringList enabled;
    for (const auto& m : m_explorer->models()) {
      if (m.enabled) enabled << m.id;
    }
    QVERIFY(enabled.contains("gp-bayes"));
    QVERIFY(!enabled.contains("gp-oracle"));
    for (const auto& id : enabled) QVERIFY2(all.at(1).ids.contains(id), qPrintable(id));
    QCOMPARE(presets->current(), ideal);
    QCOMPARE(presets->currentText(), ideal);
    m_explorer->setModelEnabled("gp-oracle", true);
    QVERIFY(presets->current().isEmpty());
    QCOMPARE(presets->currentText(), QString("Custom selection"));
    QVERIFY(!presets->apply("no such preset"));
    QVERIFY(presets->current().isEmpty());
    // The preset's model is computed and its kernel posterior shown.
    QVERIFY(presets->apply(ideal));
    m_explorer->sampleContext(5);
    QVERIFY(wait_for_refined_round(*m_explorer));
    QVERIFY(!m_explorer->kernelPosterior()->isHidden());
  }

  // Every tab routes checkpoints by the task they were trained on (ExplorerController): a model
  // with two inputs opened in the 1-D tab directly (not through the main window's routing) is
  // refused with a message saying what the tab shows, and the list is unchanged.
  void anotherTasksCheckpointIsRefusedByTheTab() {
    QTemporaryDir dir;
    npe::ModelConfig config = npe::default_model_config("tnp", "small", 2, 1);
    config.options<npe::TransformerOptions>().dim_model = 16;
    config.options<npe::TransformerOptions>().num_layers = 1;
    auto model = npe::make_model(config);
    npe::CheckpointMetadata metadata;
    metadata.model = config;
    const auto path = dir.filePath("two-inputs.pt");
    npe::save_checkpoint(path.toStdString(), *model, metadata);
    QVERIFY(!m_explorer->acceptsCheckpoint(metadata));
    const auto before = m_explorer->models().size();
    try {
      m_explorer->openCheckpoint(path);
      QFAIL("a 2-D model was opened in the 1-D tab");
    } catch (const npe::CheckpointError& e) {
      QVERIFY2(QString(e.what()).contains("1-D model"), e.what());
    }
    QCOMPARE(m_explorer->models().size(), before);
  }

  // Coherent samples come from the joint models only (GP oracle, TNP-ND) and follow the
  // context; the correlation curve appears on hover.
  void samplesAreDrawnAndFollowTheContext() {
    QTemporaryDir dir;
    const auto joint = QFileInfo(write_checkpoint(dir, "tnpnd")).absoluteFilePath();
    const auto diagonal = QFileInfo(write_checkpoint(dir, "tnp")).absoluteFilePath();
    m_explorer->openCheckpoint(joint);
    m_explorer->openCheckpoint(diagonal);
    m_explorer->setSamples(4);
    m_explorer->setCorrelationModel("gp-oracle");
    auto* plot = m_explorer->plot();
    auto oracle_samples_at = [&](double x0) {
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        QVector<double> x;
        const auto values = plot->sampleLine("gp-oracle", k, &x);
        int nearest = 0;
        for (int i = 1; i < x.size(); ++i) {
          if (std::abs(x[i] - x0) < std::abs(x[nearest] - x0)) nearest = i;
        }
        sum += values.value(nearest);
      }
      return sum / 4;
    };
    m_explorer->undoStack()->push(
        new npe::widgets::ReplacePointsCommand(m_explorer->points(), {QPointF(0, 0)}, "one"));
    QVERIFY(wait_for_refined_round(*m_explorer));
    QCOMPARE(plot->sampleLineCount("gp-oracle"), 4);
    QCOMPARE(plot->sampleLineCount(joint), 4);
    QCOMPARE(plot->sampleLineCount(diagonal), 0);
    QVERIFY(std::abs(oracle_samples_at(0.0)) < 0.6);

    m_explorer->undoStack()->push(
        new npe::widgets::ReplacePointsCommand(m_explorer->points(), {QPointF(0, 2)}, "moved"));
    QVERIFY(wait_for_refined_round(*m_explorer));
    QVERIFY(std::abs(oracle_samples_at(0.0) - 2.0) < 0.6);

    m_explorer->hoverAt(0.0);
    QVERIFY(plot->hasCorrelation());
    m_explorer->setSamples(0);
    QVERIFY(wait_for_refined_round(*m_explorer));
    QCOMPARE(plot->sampleLineCount("gp-oracle"), 0);
  }

  // Four overlapping bands read as one haze: by default only the model in focus (selected in
  // the list, or hovered there, on its curve or in the legend) has its band.
  void bandsFollowTheModelInFocus() {
    m_explorer->setModelEnabled("gp-fitted", true);
    m_explorer->sampleContext(8);
    QVERIFY(wait_for_refined_round(*m_explorer));
    auto* plot = m_explorer->plot();
    auto* list = m_explorer->findChild<npe::widgets::ModelList*>();
    auto* bands = m_explorer->findChild<QComboBox*>("bands");
    QVERIFY(list && bands);
    // The oracle is selected at start (TE-TNP where shipped models are installed).
    QVERIFY(list->select("gp-oracle"));
    QCOMPARE(plot->focusedModel(), QString("gp-oracle"));
    QVERIFY(plot->bandVisible("gp-oracle"));
    QVERIFY(!plot->bandVisible("gp-fitted"));

    Q_EMIT list->modelHovered("gp-fitted");
    QCOMPARE(plot->focusedModel(), QString("gp-fitted"));
    QVERIFY(plot->bandVisible("gp-fitted"));
    QVERIFY(!plot->bandVisible("gp-oracle"));
    QCOMPARE(list->highlighted(), QString("gp-fitted"));
    Q_EMIT list->modelHovered({});
    QCOMPARE(plot->focusedModel(), QString("gp-oracle"));
    QVERIFY(list->highlighted().isEmpty());

    // Hovering a model's curve in the plot focuses it too.
    Q_EMIT plot->modelHovered("gp-fitted");
    QVERIFY(plot->bandVisible("gp-fitted"));
    Q_EMIT plot->modelHovered({});

    // Switching the focused model off hands the focus (and the band) to a model still shown.
    m_explorer->setModelEnabled("gp-oracle", false);
    QVERIFY(!plot->focusedModel().isEmpty());
    QVERIFY(plot->focusedModel() != "gp-oracle");
    QVERIFY(plot->bandVisible(plot->focusedModel()));
    m_explorer->setModelEnabled("gp-oracle", true);
    QVERIFY(wait_for_refined_round(*m_explorer));
    QVERIFY(list->select("gp-oracle"));

    bands->setCurrentIndex(bands->findData("all"));
    QVERIFY(plot->bandVisible("gp-oracle") && plot->bandVisible("gp-fitted"));
    bands->setCurrentIndex(bands->findData("none"));
    QVERIFY(!plot->bandVisible("gp-oracle") && !plot->bandVisible("gp-fitted"));
    QCOMPARE(m_explorer->session().bands, QString("none"));
    auto restored = m_explorer->session();
    restored.bands = "all";
    m_explorer->applySession(restored);
    QCOMPARE(bands->currentData().toString(), QString("all"));
  }

  void sessionRoundTripRestoresTheState() {
    QTemporaryDir dir;
    m_explorer->sampleContext(7);
    m_explorer->setShift(0.75);
    m_explorer->setModelEnabled("gp-fitted", true);
    m_explorer->setSamples(3);
    m_explorer->setCorrelationModel("gp-fitted");
    const auto saved = m_explorer->session();
    const auto file = dir.filePath("session.json");
    m_explorer->saveSession(file);

    m_explorer->setShift(-2);
    m_explorer->sampleContext(3);
    m_explorer->setModelEnabled("gp-fitted", false);
    m_explorer->loadSession(file);
    const auto restored = m_explorer->session();
    QCOMPARE(restored.context, saved.context);
    QCOMPARE(restored.shift, 0.75);
    QCOMPARE(restored.enabled_models, saved.enabled_models);
    QCOMPARE(restored.samples, 3);
    QCOMPARE(restored.correlation_model, QString("gp-fitted"));
    QCOMPARE(restored.truth.seed, saved.truth.seed);
    QCOMPARE(restored.view_x_low, saved.view_x_low);
  }

  void badSessionFileKeepsTheCurrentState() {
    QTemporaryDir dir;
    m_explorer->sampleContext(4);
    m_explorer->setShift(0.5);
    const auto before = m_explorer->session();
    auto try_load = [&](const QByteArray& contents) {
      const auto file = dir.filePath("bad.json");
      QFile out(file);
      QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
      out.write(contents);
      out.close();
      QVERIFY_THROWS_EXCEPTION(npe::Error, m_explorer->loadSession(file));
      const auto after = m_explorer->session();
      QCOMPARE(after.context, before.context);
      QCOMPARE(after.shift, before.shift);
    };
    try_load("{ not json");
    try_load(R"({"format":"something-else","version":1})");
    try_load(R"({"format":"np-explorer-session","version":1,"context":[[0,"x"]]})");
    try_load(R"({"format":"np-explorer-session","version":1,"shift":1e300})");
    try_load(
        R"({"format":"np-explorer-session","version":1,"models":{"checkpoints":["/no/such.pt"]}})");
    QVERIFY_THROWS_EXCEPTION(npe::Error, m_explorer->loadSession(dir.filePath("missing.json")));
  }

  // A full disk while a session, the predictions' CSV or a picture of the view is written: an
  // error naming the file, and the file written before stays as it was, with nothing beside it.
  void aFullDiskKeepsTheFilesWrittenBefore() {
    QTemporaryDir dir;
    m_explorer->sampleContext(8);
    QVERIFY(wait_for_refined_round(*m_explorer));
    const std::vector<std::pair<QString, std::function<void(const QString&)>>> writers = {
        {"session.json", [&](const QString& path) { m_explorer->saveSession(path); }},
        {"predictions.csv", [&](const QString& path) { m_explorer->exportPredictions(path); }},
        {"view.png", [&](const QString& path) { m_explorer->exportView(path); }},
        {"view.pdf", [&](const QString& path) { m_explorer->exportView(path); }},
        {"view.svg", [&](const QString& path) { m_explorer->exportView(path); }}};
    for (const auto& [name, write] : writers) {
      const auto path = dir.filePath(name);
      write(path);
      const auto before = read_all(path);
      QVERIFY2(before.size() > 100, qPrintable(name));
      QString message;
      {
        const ProcessFileSizeLimit limit(static_cast<rlim_t>(before.size() / 2));
        QVERIFY(limit.set());
        try {
          write(path);
        } catch (const npe::Error& e) {
          message = QString::fromUtf8(e.what());
        }
      }
      QVERIFY2(message.contains(path), qPrintable(name + ": " + message));
      QVERIFY2(read_all(path) == before, qPrintable(name));
    }
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(),
             static_cast<int>(writers.size()));
  }

  void exportWritesPngPdfAndSvg() {
    QTemporaryDir dir;
    for (const char* name : {"plot.png", "plot.pdf", "plot.svg"}) {
      const auto file = dir.filePath(name);
      m_explorer->exportView(file);
      QVERIFY2(QFileInfo(file).size() > 1000, name);
    }
    QVERIFY_THROWS_EXCEPTION(npe::Error, m_explorer->exportView(dir.filePath("plot.bmpx")));
  }

  void equivarianceMetricSeparatesTeFromPlainModels() {
    QTemporaryDir dir;
    npe::widgets::PredictionRequest request;
    request.refine = true;
    request.shift = {5.0};
    std::vector<float> xt;
    for (int i = 0; i < 50; ++i) xt.push_back(3.0f + 0.08f * i);
    request.batch.task = {column({4.0f, 5.0f, 6.0f}), column({0.5f, -0.2f, 0.1f}), column(xt), {}};
    request.batch.oracle =
        std::make_shared<npe::GpOracle>(std::vector<npe::KernelSpec>{npe::KernelSpec{}}, 0.2);
    request.held_out_x = column({5.2f, 5.4f});
    request.held_out_y = column({0.0f, 0.1f});
    request.models = {npe::widgets::baseline_entry("gp-oracle"),
                      npe::widgets::load_model_entry(write_checkpoint(dir, "tetnp"), Qt::red),
                      npe::widgets::load_model_entry(write_checkpoint(dir, "tnp"), Qt::blue)};
    auto result = npe::widgets::compute_predictions(request);
    QCOMPARE(result.models.size(), size_t(3));
    for (const auto& m : result.models) {
      QVERIFY2(m.error.isEmpty(), qPrintable(m.error));
      QCOMPARE(m.mean.size(0), int64_t(50));
      QVERIFY(std::isfinite(m.held_out_ll));
    }
    QVERIFY(result.models[0].equivariance_error < 1e-6);
    QVERIFY(result.models[1].equivariance_error < 1e-4);
    QVERIFY(result.models[2].equivariance_error > 1e-3);
  }

  // Issue 104 §4: a model trained on the user's series opens with its data. The tab shows a
  // held-out (test) window of the series in the model's coordinates, with context sampled from
  // its rows; the axes read in the data's units (dates, degrees); the window's other rows are the
  // held-out truth; a session keeps the window; a model whose data is gone still opens.
  void aModelTrainedOnASeriesOpensWithItsData() {
    QTemporaryDir dir;
    const auto csv = dir.filePath("temperatures.csv");
    {
      QFile file(csv);
      QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Text));
      QTextStream out(&file);
      out << "date,temp\n";
      for (int h = 0; h < 24 * 40; ++h) {
        const auto when =
            QDateTime(QDate(2016, 7, 1), QTime(0, 0), QTimeZone::utc()).addSecs(h * 3600);
        out << when.toString("yyyy/MM/dd hh:mm") << ','
            << QString::number(15.0 + 6.0 * std::sin(2.0 * M_PI * h / 24.0) + 0.01 * (h % 7), 'f',
                               2)
            << '\n';
      }
    }
    npe::SeriesTaskConfig config;
    config.data = csv.toStdString();
    config.window = 72.0;
    const npe::SeriesTaskSource source(config);
    npe::ModelConfig model_config = npe::default_model_config("tetnp", "small");
    tiny_tetnp_sizes().apply_to(model_config);
    auto model = npe::make_model(model_config);
    npe::CheckpointMetadata metadata;
    metadata.model = model_config;
    metadata.task = source.to_json();
    const auto path = dir.filePath("series-tetnp.pt");
    npe::save_checkpoint(path.toStdString(), *model, metadata);

    QSignalSpy status(m_explorer.get(), &FunctionExplorer::statusMessage);
    m_explorer->openCheckpoint(path);
    auto* truth = m_explorer->findChild<npe::widgets::GroundTruthBox*>();
    QVERIFY(truth);
    QVERIFY(truth->seriesMode());
    const auto* series = truth->series();
    QVERIFY(series);
    QCOMPARE(series->split(), npe::Split::Test);
    QCOMPARE(series->window(), int64_t(0));
    // Its rows in the model's coordinates: the window onto [-2, 2], y standardised.
    QVERIFY(series->points().size() >= 70);
    for (const auto& p : series->points()) QVERIFY(p.x() >= -2.0 - 1e-9 && p.x() < 2.0);
    // Every context point is a row of the window, and reads back in the data's units.
    const auto context = m_explorer->points()->points();
    QCOMPARE(int(context.size()), truth->sampleCount());
    // Half the most context the model saw in training; no true kernel for real data: the oracle
    // is off, the per-task fitted GP on.
    QCOMPARE(truth->sampleCount(), int(source.config().max_num_context / 2));
    for (const auto& entry : m_explorer->models()) {
      if (entry.id == "gp-oracle") QVERIFY(!entry.enabled);
      if (entry.id == "gp-fitted" || entry.id == path) QVERIFY(entry.enabled);
    }
    const auto& axes = series->axes();
    for (const auto& c : context) {
      QVERIFY(std::find(series->points().begin(), series->points().end(), c) !=
              series->points().end());
      const double hours = axes.data_x(c.x());
      QVERIFY(std::abs(hours - std::round(hours)) < 1e-6);  // on the hour, as in the file
      const double expected = 15.0 + 6.0 * std::sin(2.0 * M_PI * std::round(hours) / 24.0) +
                              0.01 * (int(std::round(hours)) % 7);
      QVERIFY2(std::abs(axes.data_y(c.y()) - expected) < 0.006,
               qPrintable(QString("%1 vs %2").arg(axes.data_y(c.y())).arg(expected)));
    }
    // The test part is the end of the series: its window starts after 80 % of the rows.
    QVERIFY2(axes.describe_x(axes.data_x(series->points().front().x())).startsWith("2016-08-0"),
             qPrintable(axes.describe_x(axes.data_x(series->points().front().x()))));
    QVERIFY(status.size() > 0);
    QVERIFY(status.last().at(0).toString().contains("temperatures.csv"));

    // The axes read in the data's units: dates along x, degrees along y.
    QVERIFY(wait_for_refined_round(*m_explorer));
    auto* plot = m_explorer->plot();
    plot->replot();
    QCOMPARE(plot->xAxis->label(), QString("date (UTC)"));
    QCOMPARE(plot->yAxis->label(), QString("temp"));
    QVERIFY(!plot->xAxis->tickVectorLabels().isEmpty());
    for (const auto& label : plot->xAxis->tickVectorLabels()) QVERIFY(label.contains("08-"));
    // Ticks at round values of the data's units: multiples of a step of 1, 2, 2.5 or 5 × 10^k.
    const auto y_ticks = plot->yAxis->tickVector();
    QVERIFY(y_ticks.size() >= 2);
    const double step = axes.data_y(y_ticks[1]) - axes.data_y(y_ticks[0]);
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
    QVERIFY2(std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 ||
                 std::abs(mantissa - 2.5) < 1e-6 || std::abs(mantissa - 5) < 1e-6,
             qPrintable(QString::number(step)));
    for (const double tick : y_ticks) {
      const double steps = axes.data_y(tick) / step;
      QVERIFY2(std::abs(steps - std::round(steps)) < 1e-6,
               qPrintable(QString::number(axes.data_y(tick))));
    }
    // The held-out truth: the window's rows that are not context, where the model is scored.
    // The table is in the data's units, its columns named as the file's.
    const auto table = m_explorer->predictionTable();
    QCOMPARE(table.columns[0], std::string("date"));
    QCOMPARE(table.columns[1], std::string("temp"));
    const int held_out_column = table.column_index("held_out");
    QVERIFY(held_out_column >= 0);
    int held_out = 0;
    for (const auto& row : table.rows) {
      if (row[size_t(held_out_column)] != 1.0) continue;
      ++held_out;
      const double hours = std::round(row[0]);  // hours since the first row, on the hour
      QVERIFY(std::abs(row[0] - hours) < 1e-6);
      QVERIFY(std::abs(row[1] - (15.0 + 6.0 * std::sin(2.0 * M_PI * hours / 24.0) +
                                 0.01 * (int(hours) % 7))) < 0.006);
    }
    QCOMPARE(held_out, int(series->points().size() - context.size()));
    // The export writes the rows' date-times as the axis reads them.
    const auto exported = dir.filePath("exported.csv");
    m_explorer->exportPredictions(exported);
    {
      QFile file(exported);
      QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
      const auto lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
      QCOMPARE(int(lines.size()), int(table.rows.size()) + 1);
      QVERIFY2(lines[0].startsWith("date,temp,held_out"), qPrintable(lines[0]));
      QVERIFY2(lines[1].startsWith("2016-08-"), qPrintable(lines[1]));
    }
    // Shown per point in the data's units: the standardised figure minus log(y_std).
    bool ll_ok = false;
    const double shown_ll = m_explorer->metrics()->cellText(path, 1).toDouble(&ll_ok);
    QVERIFY2(ll_ok, qPrintable(m_explorer->metrics()->cellText(path, 1)));
    // ... recomputed from the held-out rows of the exported table (the data's units).
    QString name;
    for (const auto& entry : m_explorer->models()) {
      if (entry.id == path) name = entry.name;
    }
    const int mean_column = table.column_index(npe::widgets::prediction_column(name, "mean"));
    const int std_column = table.column_index(npe::widgets::prediction_column(name, "std"));
    QVERIFY(mean_column >= 0 && std_column >= 0);
    double ll_sum = 0.0;
    for (const auto& row : table.rows) {
      if (row[size_t(held_out_column)] != 1.0) continue;
      const double z = (row[1] - row[size_t(mean_column)]) / row[size_t(std_column)];
      ll_sum += -0.5 * z * z - std::log(row[size_t(std_column)]) - 0.5 * std::log(2.0 * M_PI);
    }
    const double expected_ll = ll_sum / held_out;
    QVERIFY2(std::abs(shown_ll - expected_ll) < 2e-3,
             qPrintable(QString("%1 vs %2").arg(shown_ll).arg(expected_ll)));

    // Another window; a session keeps it.
    truth->setSeriesWindow(npe::Split::Test, 24);
    const auto saved = m_explorer->session();
    QCOMPARE(saved.series_model, path);
    QCOMPARE(saved.series_window, qint64(24));
    const auto restored_session = npe::widgets::Session::from_json(saved.to_json());
    FunctionExplorer other;
    other.applySession(restored_session);
    auto* other_truth = other.findChild<npe::widgets::GroundTruthBox*>();
    QVERIFY(other_truth->seriesMode());
    QCOMPARE(other_truth->series()->window(), int64_t(24));
    QCOMPARE(other.points()->points(), m_explorer->points()->points());
    QCOMPARE(other.plot()->xAxis->label(), QString("date (UTC)"));

    // The data gone: the model still opens, the truth stays the GP sample, and the tab says why.
    QVERIFY(QFile::remove(csv));
    FunctionExplorer third;
    QSignalSpy third_status(&third, &FunctionExplorer::statusMessage);
    third.openCheckpoint(path);
    QVERIFY(third.models().back().id == path);
    QVERIFY(!third.findChild<npe::widgets::GroundTruthBox*>()->seriesMode());
    QVERIFY(third_status.size() > 0);
    QVERIFY(third_status.last().at(0).toString().contains("could not be read"));
  }

  // Guardrails (issue 107 §1): a model is flagged where the scene leaves what it saw in training
  // (its checkpoint's task): context beyond the training inputs for a model that is not
  // translation equivariant, never for a TE model; more context points than in training for
  // every model. Baselines and models without a recorded task are never flagged; the latter say
  // that their training is unknown.
  void modelsOutsideTheirTrainingAreFlagged() {
    QTemporaryDir dir;
    const auto trained_on_gp1d = [&](const std::string& kind) {
      npe::ModelConfig config = npe::default_model_config(kind, "small");
      tiny_tetnp_sizes().apply_to(config);
      auto model = npe::make_model(config);
      npe::CheckpointMetadata metadata;
      metadata.model = config;
      metadata.task = npe::GpTaskConfig().to_json();
      const auto path = dir.filePath(QString::fromStdString(kind) + "-gp1d.pt");
      npe::save_checkpoint(path.toStdString(), *model, metadata);
      return npe::widgets::load_model_entry(path, Qt::red);
    };
    const auto notes_for = [&](std::vector<float> cx) {
      npe::widgets::PredictionRequest request;
      std::vector<float> cy(cx.size(), 0.1f);
      request.batch.task = {column(cx), column(cy), column({0.0f, 1.0f}), {}};
      request.models = {npe::widgets::baseline_entry("gp-fitted"), trained_on_gp1d("tetnp"),
                        trained_on_gp1d("tnp"),
                        npe::widgets::load_model_entry(write_checkpoint(dir, "tnp"), Qt::blue)};
      QStringList notes;
      for (const auto& m : npe::widgets::compute_predictions(request).models) {
        notes << m.outside_training.join("; ");
      }
      return notes;
    };
    // Inside: nothing said; the model file without a task says its training is unknown.
    auto notes = notes_for({-1.0f, 0.0f, 1.5f});
    QCOMPARE(notes, QStringList({"", "", "", ""}));
    {
      npe::widgets::PredictionRequest request;
      request.batch.task = {column({0.0f}), column({0.1f}), column({0.0f, 1.0f}), {}};
      request.models = {npe::widgets::baseline_entry("gp-fitted"), trained_on_gp1d("tnp"),
                        npe::widgets::load_model_entry(write_checkpoint(dir, "tnp"), Qt::blue)};
      const auto models = npe::widgets::compute_predictions(request).models;
      QVERIFY(!models[0].training_unknown && !models[1].training_unknown);
      QVERIFY(models[2].training_unknown);
      QCOMPARE(models[2].note(), QString("training unknown"));
    }
    // Shifted out of [-2, 2]: the TNP trained on gp1d only.
    notes = notes_for({4.0f, 5.0f, 6.0f});
    QCOMPARE(notes[0], QString());
    QCOMPARE(notes[1], QString());
    QVERIFY2(notes[2].contains("context beyond [-2, 2]"), qPrintable(notes[2]));
    QCOMPARE(notes[3], QString());  // no task recorded: nothing known
    // 80 context points, more than the 64 of training: both trained models.
    std::vector<float> many;
    for (int i = 0; i < 80; ++i) many.push_back(-1.0f + 0.025f * i);
    notes = notes_for(many);
    QVERIFY2(notes[1].contains("80 context points > 64"), qPrintable(notes[1]));
    QVERIFY(notes[2].contains("80 context points > 64"));
    QCOMPARE(notes[0], QString());
  }

  void oracleWithoutGroundTruthReportsAnErrorInsteadOfFailing() {
    npe::widgets::PredictionRequest request;
    request.batch.task = {column({0.0f}), column({1.0f}), column({0.5f}), {}};
    request.models = {npe::widgets::baseline_entry("gp-oracle"),
                      npe::widgets::baseline_entry("gp-fitted")};
    auto result = npe::widgets::compute_predictions(request);
    QVERIFY(result.models[0].error.contains("generating process is known"));
    QVERIFY(result.models[1].error.isEmpty());
  }

  void deltaSweepRunsInTheBackgroundAndCanBeCancelled() {
    npe::widgets::SweepDialog dialog({npe::widgets::baseline_entry("gp-oracle")}, nullptr, 16);
    QSignalSpy finished(&dialog, &npe::widgets::SweepDialog::finished);
    dialog.start();
    QVERIFY(finished.wait(60000));
    const auto& row = dialog.results().at(0);
    QCOMPARE(row.size(), dialog.shifts().size());
    // Regression: "Done" was shown with the bar at 98 %.
    auto* bar = dialog.findChild<QProgressBar*>();
    QCOMPARE(bar->value(), bar->maximum());
    for (double ll : row) {
      QVERIFY(std::isfinite(ll));
      QVERIFY(std::abs(ll - row.front()) < 1e-4);  // paired tasks, stationary GP
    }
    // Cancelling a long sweep stops it early.
    npe::widgets::SweepDialog slow({npe::widgets::baseline_entry("gp-fitted")}, nullptr, 256);
    QSignalSpy slow_finished(&slow, &npe::widgets::SweepDialog::finished);
    slow.start();
    QTest::qWait(200);
    slow.findChild<QPushButton*>()->click();
    QVERIFY(slow_finished.wait(60000));
    QVERIFY(!std::isfinite(slow.results().at(0).back()));
  }

  void attentionWeightsAreANormalisedDistributionOverTheContext() {
    QTemporaryDir dir;
    npe::widgets::AttentionRequest request;
    request.batch.task = {
        column({-1.0f, 0.0f, 1.0f, 2.0f}), column({0.1f, 0.2f, -0.3f, 0.4f}), column({0.5f}), {}};
    request.model = npe::widgets::load_model_entry(write_checkpoint(dir, "tetnp"), Qt::red);
    auto result = npe::widgets::compute_attention(request);
    QCOMPARE(result.weights.size(), size_t(4));
    double total = 0;
    for (double w : result.weights) {
      QVERIFY(w >= 0);
      total += w;
    }
    QVERIFY(std::abs(total - 1.0) < 1e-5);
    QVERIFY(std::isfinite(result.mean));
  }

  void requestsAreCoalesced() {
    npe::widgets::PredictionService service;
    std::vector<uint64_t> served;
    connect(&service, &npe::widgets::PredictionService::predictionsReady,
            [&](const npe::widgets::PredictionResult& r) { served.push_back(r.serial); });
    for (uint64_t serial = 1; serial <= 40; ++serial) {
      npe::widgets::PredictionRequest request;
      request.serial = serial;
      std::vector<float> xt;
      for (int i = 0; i < 256; ++i) xt.push_back(i / 64.0f);
      request.batch.task = {column({0.0f}), column({0.0f}), column(xt), {}};
      request.models = {npe::widgets::baseline_entry("gp-fitted")};
      service.request(std::move(request));
    }
    QTRY_VERIFY_WITH_TIMEOUT(!served.empty() && served.back() == 40, 30000);
    QVERIFY(served.size() < 40);
    QVERIFY(std::is_sorted(served.begin(), served.end()));
  }

  void aPausedServiceHoldsItsRequestsAndServesTheNewestOnResuming() {
    npe::widgets::PredictionService service;
    service.setPaused(true);
    std::vector<uint64_t> served;
    connect(&service, &npe::widgets::PredictionService::predictionsReady,
            [&](const npe::widgets::PredictionResult& r) { served.push_back(r.serial); });
    for (uint64_t serial = 1; serial <= 3; ++serial) {
      npe::widgets::PredictionRequest request;
      request.serial = serial;
      request.batch.task = {column({0.0f}), column({0.0f}), column({0.5f, 1.0f}), {}};
      request.models = {npe::widgets::baseline_entry("gp-fitted")};
      service.request(std::move(request));
    }
    QTest::qWait(500);
    QVERIFY(served.empty());
    service.setPaused(false);
    QTRY_VERIFY_WITH_TIMEOUT(!served.empty(), 30000);
    QTest::qWait(200);
    QCOMPARE(served, std::vector<uint64_t>{3});
  }

  // A tab behind others computes nothing until it is in front again, then catches up.
  // Issue 82: "Where to observe next?" with the GP of the true kernel, context on the left
  // half only: its proposal is the top of the score strip under the plot, on the right half
  // (the far side from the data); Add observes there at the model's mean (undoable); off
  // clears the strip. A session keeps the setting.
  void theSuggestionProposesWhereTheModelKnowsLeastAndAddsIt() {
    m_explorer->undoStack()->push(new npe::widgets::ReplacePointsCommand(
        m_explorer->points(), {QPointF(-3.5, 0.2), QPointF(-2.5, -0.4), QPointF(-1.5, 0.6)},
        "left"));
    m_explorer->plot()->xAxis->setRange(-4, 4);
    auto* box = m_explorer->suggestionBox();
    auto* suggester = m_explorer->suggester();
    QSignalSpy answered(suggester, &npe::widgets::ObservationSuggester::answered);
    box->setModel("gp-oracle");
    box->setScore(npe::AcquisitionScore::variance_reduction);
    box->setEnabledSuggestion(true);
    QVERIFY(answered.wait(30000));
    QVERIFY(!suggester->pending());
    QVERIFY(m_explorer->extrasPending() == false);
    const auto proposal = suggester->proposal();
    QVERIFY(proposal.has_value());
    QVector<double> x;
    const auto score = m_explorer->plot()->acquisitionCurve(&x);
    QCOMPARE(score.size(), int(npe::widgets::ObservationSuggester::kCandidates));
    const auto best = std::max_element(score.begin(), score.end()) - score.begin();
    QCOMPARE(proposal->x(), x[int(best)]);
    QVERIFY2(proposal->x() > 0.0, qPrintable(QString::number(proposal->x())));
    for (double v : score) QVERIFY(std::isfinite(v) && v >= 0.0);
    QVERIFY(score[int(best)] > 0.0);

    const auto session = m_explorer->session();
    QCOMPARE(session.suggestion_model, QString("gp-oracle"));
    QCOMPARE(npe::widgets::Session::from_json(session.to_json()).suggestion_model,
             QString("gp-oracle"));

    auto* add = box->findChild<QPushButton*>();
    QVERIFY(add && add->isEnabled());
    add->click();
    QCOMPARE(m_explorer->points()->points().size(), size_t(4));
    QCOMPARE(m_explorer->points()->points().back(), *proposal);
    // The next proposal follows the new data.
    QTRY_VERIFY_WITH_TIMEOUT(
        suggester->proposal().has_value() && suggester->proposal()->x() != proposal->x(), 30000);
    m_explorer->undoStack()->undo();
    QCOMPARE(m_explorer->points()->points().size(), size_t(3));

    box->setEnabledSuggestion(false);
    QVERIFY(!m_explorer->plot()->hasAcquisition());
    QVERIFY(!suggester->proposal().has_value());
    QVERIFY(m_explorer->session().suggestion_model.isEmpty());
  }

  // Issue 107 §2: an episode's observation is the hidden truth plus the noise of its stated σ
  // (the same draw k in every strategy's run and on a replay); the strategies observe where they
  // say; every shown model's held-out RMSE and LL are recorded after each observation and drawn;
  // a replay with the same seed repeats the random places; sessions keep episodes; End reveals.
  void observeTheTruthEpisodes() {
    using npe::widgets::ObserveStrategy;
    auto* box = m_explorer->episodeBox();
    auto* runner = m_explorer->episodeRunner();
    auto* truth_box = m_explorer->findChild<npe::widgets::GroundTruthBox*>();
    QVERIFY(truth_box && truth_box->showTruth());
    const std::vector<QPointF> start{QPointF(-1.0, 0.3), QPointF(0.5, -0.2)};
    m_explorer->undoStack()->push(
        new npe::widgets::ReplacePointsCommand(m_explorer->points(), start, "start"));
    m_explorer->plot()->xAxis->setRange(-4, 4);
    QVERIFY(wait_for_refined_round(*m_explorer));
    const auto& truth = truth_box->truth();

    // The noise of the stated σ: 4,000 draws of one episode.
    {
      const npe::widgets::TruthEpisode episode({}, 7, 0.3);
      double sum = 0, squares = 0;
      constexpr int n = 4000;
      for (int k = 0; k < n; ++k) {
        sum += episode.noise(k);
        squares += episode.noise(k) * episode.noise(k);
      }
      const double mean = sum / n, sd = std::sqrt(squares / n - mean * mean);
      QVERIFY2(std::abs(mean) < 4 * 0.3 / std::sqrt(n), qPrintable(QString::number(mean)));
      QVERIFY2(std::abs(sd / 0.3 - 1) < 0.05, qPrintable(QString::number(sd)));
    }

    box->setStrategy(ObserveStrategy::random_place);
    runner->observe(3);
    QVERIFY(runner->episode().has_value());
    QVERIFY(!truth_box->showTruth());  // hidden while the episode runs
    QTRY_VERIFY_WITH_TIMEOUT(
        runner->episode()->observed(ObserveStrategy::random_place) == 3 && runner->pending() == 0,
        60000);
    QTRY_COMPARE_WITH_TIMEOUT(
        runner->episode()->run(ObserveStrategy::random_place)->scores.at("gp-oracle").size(),
        size_t(4), 60000);
    const auto& episode = *runner->episode();
    const auto* random_run = episode.run(ObserveStrategy::random_place);
    QVERIFY(random_run);
    const auto random_places = random_run->observations;
    QCOMPARE(m_explorer->points()->size(), 5);
    for (int k = 0; k < 3; ++k) {
      const auto& p = random_places[size_t(k)];
      QCOMPARE(m_explorer->points()->points()[size_t(2 + k)], p);
      QVERIFY(p.x() >= -4 && p.x() <= 4);
      QVERIFY(std::abs(p.y() - (truth.value(p.x()) + episode.noise(k))) < 1e-12);
    }
    // Every shown model has a score after 0 to 3 observations, and the plot draws them.
    const auto& oracle_scores = random_run->scores.at("gp-oracle");
    QCOMPARE(oracle_scores.size(), size_t(4));
    for (const auto& score : oracle_scores) {
      QVERIFY(std::isfinite(score.rmse) && score.rmse > 0 && std::isfinite(score.ll));
    }
    QTRY_VERIFY(box->curves()->graphCount() > 0);
    bool drawn = false;
    for (int g = 0; g < box->curves()->graphCount(); ++g) {
      drawn = drawn || box->curves()->graph(g)->dataCount() == 4;
    }
    QVERIFY(drawn);

    // GP uncertainty sampling: its own run, from the start context, with the same noise draws;
    // it observes where the oracle's std over the view is largest, which after a first
    // observation is never on it.
    box->setStrategy(ObserveStrategy::gp_uncertainty);
    QCOMPARE(m_explorer->points()->points(), start);
    runner->observe(2);
    QTRY_VERIFY_WITH_TIMEOUT(
        runner->episode()->observed(ObserveStrategy::gp_uncertainty) == 2 && runner->pending() == 0,
        60000);
    // The scores after the last observation come with its prediction round.
    QTRY_COMPARE_WITH_TIMEOUT(
        runner->episode()->run(ObserveStrategy::gp_uncertainty)->scores.at("gp-oracle").size(),
        size_t(3), 60000);
    const auto gp_places = runner->episode()->run(ObserveStrategy::gp_uncertainty)->observations;
    for (int k = 0; k < 2; ++k) {
      const auto& p = gp_places[size_t(k)];
      QVERIFY(std::abs(p.y() - (truth.value(p.x()) + runner->episode()->noise(k))) < 1e-12);
    }
    QVERIFY(std::abs(gp_places[0].x() - gp_places[1].x()) > 0.5);
    // The context's far edge is where a GP knows least.
    QVERIFY2(std::abs(gp_places[0].x()) > 2.5, qPrintable(QString::number(gp_places[0].x())));

    // Back to the random run: its context; a replay repeats its places.
    box->setStrategy(ObserveStrategy::random_place);
    QCOMPARE(m_explorer->points()->size(), 5);
    runner->replay();
    QCOMPARE(m_explorer->points()->points(), start);
    QCOMPARE(runner->episode()->observed(ObserveStrategy::random_place), 0);
    QVERIFY(wait_for_refined_round(*m_explorer));
    runner->observe(3);
    QTRY_VERIFY_WITH_TIMEOUT(
        runner->episode()->observed(ObserveStrategy::random_place) == 3 && runner->pending() == 0,
        60000);
    QCOMPARE(runner->episode()->run(ObserveStrategy::random_place)->observations, random_places);

    // The user's click: the truth answers at the clicked x, not at the clicked height.
    box->setStrategy(ObserveStrategy::click);
    QCOMPARE(m_explorer->points()->points(), start);
    runner->observe(1);
    auto* plot = m_explorer->plot();
    QTest::mouseClick(plot, Qt::LeftButton, {}, plot->toPixel({1.5, -1.5}).toPoint());
    QCOMPARE(m_explorer->points()->size(), 3);
    const auto clicked = m_explorer->points()->points().back();
    QVERIFY(std::abs(clicked.x() - 1.5) < 0.05);
    QVERIFY(std::abs(clicked.y() - (truth.value(clicked.x()) + runner->episode()->noise(0))) <
            1e-12);

    // A session keeps the episode: its runs, places and scores.
    QVERIFY(wait_for_refined_round(*m_explorer));
    const auto session = m_explorer->session();
    const auto back = npe::widgets::Session::from_json(session.to_json());
    QVERIFY(back.episode.has_value());
    QCOMPARE(back.episode_strategy, QString("click"));
    QCOMPARE(back.episode->runs().size(), size_t(3));
    QCOMPARE(back.episode->run(ObserveStrategy::random_place)->observations, random_places);
    QCOMPARE(back.episode->run(ObserveStrategy::gp_uncertainty)->scores.at("gp-oracle").size(),
             size_t(3));
    QCOMPARE(back.episode->noise(2), runner->episode()->noise(2));
    runner->end();
    QVERIFY(!runner->episode().has_value());
    QVERIFY(truth_box->showTruth());
    m_explorer->applySession(back);
    QVERIFY(runner->episode().has_value());
    QCOMPARE(box->strategy(), ObserveStrategy::click);
    QCOMPARE(runner->episode()->run(ObserveStrategy::random_place)->observations, random_places);
    // A session's broken episode is an error in words.
    QVERIFY_THROWS_EXCEPTION(npe::DataError,
                             npe::widgets::TruthEpisode::from_json(QJsonObject{{"seed", "x"}}));
  }

  void anInactiveTabDefersItsRoundsUntilActive() {
    QVERIFY(m_explorer->isActive());
    m_explorer->sampleContext(4);
    QVERIFY(wait_for_refined_round(*m_explorer));
    m_explorer->setActive(false);
    QSignalSpy spy(m_explorer.get(), &FunctionExplorer::predictionsUpdated);
    m_explorer->sampleContext(9);
    const auto edited = std::chrono::steady_clock::now();
    QVERIFY(!spy.wait(1500));  // longer than the 300 ms settle delay and a round
    m_explorer->setActive(true);
    QVERIFY(wait_for_refined_round(*m_explorer));
    QVERIFY(m_explorer->lastRoundStarted() > edited);
  }

 private:
  std::unique_ptr<FunctionExplorer> m_explorer;
};

QTEST_MAIN(FunctionExplorerTest)
#include "function_explorer_test.moc"
