// GUI tests of the training tab (QtTest, offscreen), with real `npe train` child processes:
// bad form input rejected with a message, a tiny job whose curves update, pause / resume /
// stop keeping a resumable checkpoint, one job per device at a time. ("Use in explorer", which
// needs an explorer, is tested with the main window.) It links the training tab's library only,
// which CI also builds and runs under AddressSanitizer.

#include <signal.h>

#include <memory>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "common/custom_plot.h"
#include "npe/data/date_time.h"
#include "npe/models/checkpoint.h"
#include "npe/training/training.h"
#include "npe/training/training_job.h"
#include "npe/training/training_recipe.h"
#include "training/task_data_preview.h"
#include "training/training_process.h"
#include "training/training_request.h"
#include "training/training_tab.h"

using npe::widgets::TrainingTab;
using State = TrainingTab::JobState;

namespace {

constexpr int kTimeoutMs = 120000;

}  // namespace

class TrainingTabTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;

  // A job that trains until stopped, validating and checkpointing every few steps.
  npe::widgets::TrainingRequest endless(const QString& name, const QString& model = "cnp") {
    npe::widgets::TrainingRequest r;
    r.task = "gp1d";
    r.model = model;
    r.size = "small";
    r.steps = 1000000;
    r.batch_size = 4;
    r.device = "cpu";
    r.checkpoint_every = 5;
    r.validation_every = 5;
    r.output_path = m_dir.filePath(name);
    return r;
  }

 private Q_SLOTS:
  void badInputIsRejectedInTheForm() {
    TrainingTab tab;
    auto r = endless("a.pt");
    r.output_path = "/proc/no-such-place/model.pt";
    tab.setFormRequest(r);
    QVERIFY(!tab.submit().isEmpty());
    QVERIFY(tab.formMessage()->text().contains("Cannot"));
    r = endless("a.pt", "tnp");
    r.size = "custom";
    r.dim_model = 30;
    r.num_heads = 4;
    tab.setFormRequest(r);
    const auto problems = tab.submit();
    QVERIFY(!problems.isEmpty());
    QVERIFY2(problems.join(' ').contains("multiple of the heads"), qPrintable(problems.join(' ')));
    if (!torch::cuda::is_available()) {
      r = endless("a.pt");
      r.device = "cuda";
      tab.setFormRequest(r);
      QVERIFY(tab.submit().join(' ').contains("no CUDA GPU"));
    }
    r = endless("a.pt");
    r.output_path = m_dir.path();  // a folder, not a file
    tab.setFormRequest(r);
    QVERIFY(tab.submit().join(' ').contains("is a folder"));
    QCOMPARE(tab.jobCount(), 0);
  }

  // The form's training fields take exactly the ranges npe train checks (core's
  // TrainOptions::fields), and a request beyond one is refused with core's message.
  void theFormsLimitsAreCoresTrainingSettings() {
    TrainingTab tab;
    int compared = 0;
    for (const auto& field : npe::describe_fields(npe::TrainOptions{}.visit_fields())) {
      const auto name = QString::fromStdString(field.name);
      if (auto* box = tab.findChild<QSpinBox*>(name)) {
        QCOMPARE(int64_t(box->minimum()), field.min.get<int64_t>());
        QCOMPARE(int64_t(box->maximum()), field.max.get<int64_t>());
        ++compared;
      } else if (auto* number = tab.findChild<QDoubleSpinBox*>(name)) {
        QCOMPARE(number->minimum(), field.min.get<double>());
        QCOMPARE(number->maximum(), field.max.get<double>());
        ++compared;
      }
    }
    QCOMPARE(compared, 4);  // steps, batch size, learning rate, validation interval
    auto r = endless("limits.pt");
    r.batch_size = int(npe::kMaxBatchSize) + 1;  // the form's field cannot hold it
    const auto problems = npe::widgets::validate_request(r).join(' ');
    QVERIFY2(problems.contains("batch_size") && problems.contains("65536"), qPrintable(problems));
  }

  // Custom widths reach npe train's recipe only as settings the kind has (a recipe naming
  // another kind's is refused), and the form shows only those fields, with the options' limits.
  void customWidthsAreTheKindsOwnSettings() {
    auto r = endless("c.pt", "cnp");
    r.size = "custom";
    auto options = r.recipe().model_options;
    QCOMPARE(options.value("dim_model", 0), 64);
    QVERIFY(!options.contains("num_layers") && !options.contains("num_pseudo_tokens"));
    r.model = "tepttnp";
    options = r.recipe().model_options;
    QCOMPARE(options.value("num_layers", 0), 4);
    QCOMPARE(options.value("num_pseudo_tokens", 0), 32);
    TrainingTab tab;
    r.model = "cnp";
    tab.setFormRequest(r);
    auto* pseudo = tab.findChild<QSpinBox*>("num_pseudo_tokens");
    QVERIFY(pseudo);
    QVERIFY(!pseudo->isVisibleTo(&tab));
    r.model = "pttnp";
    tab.setFormRequest(r);
    QVERIFY(pseudo->isVisibleTo(&tab));
    for (const char* name : {"dim_model", "num_layers", "num_heads", "num_pseudo_tokens"}) {
      auto* field = tab.findChild<QSpinBox*>(name);
      const auto option = npe::widgets::modelOption("pttnp", name);
      QVERIFY2(field && option, name);
      QCOMPARE(int64_t(field->minimum()), option->min.get<int64_t>());
      QCOMPARE(int64_t(field->maximum()), option->max.get<int64_t>());
    }
  }

  // "Centre each task on its context" is the model option centre_per_task, of any kind and
  // size, and the job's model has it.
  void centringEachTaskIsAModelOptionOfTheRecipe() {
    TrainingTab tab;
    auto* centre = tab.findChild<QCheckBox*>("centre_per_task");
    QVERIFY(centre);
    QVERIFY(!tab.formRequest().centre_per_task);
    QVERIFY(!tab.formRequest().recipe().model_options.contains("centre_per_task"));
    centre->setChecked(true);
    const auto r = tab.formRequest();
    QVERIFY(r.centre_per_task);
    QCOMPARE(r.recipe().model_options.value("centre_per_task", false), true);
    const auto spec = r.recipe().resolve("test");
    QVERIFY(spec.model.centre_per_task);
    TrainingTab other;
    other.setFormRequest(r);
    QVERIFY(other.findChild<QCheckBox*>("centre_per_task")->isChecked());
  }

  // A new job hands npe train core's recipe on its standard input (`--spec -`), not an argv of
  // settings; the checkpoint records the recipe with the command line, and a resume needs none.
  void aNewJobHandsNpeTrainItsRecipe() {
    auto r = endless("recipe.pt", "tnp");
    r.size = "custom";
    r.num_layers = 2;
    r.learning_rate = 0.002;
    r.seed = 7;
    const auto args = r.arguments().join(' ');
    QVERIFY2(
        args.startsWith("train --spec - ") && !args.contains("--lr") && !args.contains("--model"),
        qPrintable(args));
    const auto line = r.recipeLine();
    QVERIFY(line.endsWith('\n') && line.count('\n') == 1);
    const auto sent = npe::TrainingRecipe::from_json(nlohmann::json::parse(line.toStdString()));
    QCOMPARE(QString::fromStdString(sent.model), QString("tnp"));
    QCOMPARE(sent.model_options.value("num_layers", 0), 2);
    QCOMPARE(sent.training.learning_rate, 0.002);
    QCOMPARE(sent.training.seed, uint64_t(7));

    TrainingTab tab;
    tab.setFormRequest(r);
    QVERIFY(tab.submit().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobStep(0) >= 1, kTimeoutMs);
    tab.stopJob(0);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Stopped, kTimeoutMs);
    const auto meta = npe::read_checkpoint_metadata(tab.jobCheckpoint(0).toStdString());
    QCOMPARE(QString::fromStdString(meta.model.kind), QString("tnp"));
    QCOMPARE(meta.model.to_json().value("num_layers", 0), 2);
    QCOMPARE(meta.seed, uint64_t(7));
    const auto job = npe::TrainingJob::resume(tab.jobCheckpoint(0).toStdString());
    QCOMPARE(job->spec().options.learning_rate, 0.002);
    QCOMPARE(QString::fromStdString(meta.size), QString("custom"));
    QVERIFY2(QString::fromStdString(meta.command).contains("--spec - ") &&
                 QString::fromStdString(meta.command).contains("<<< '{"),
             meta.command.c_str());
    r.resume_path = tab.jobCheckpoint(0);
    QVERIFY(r.recipeLine().isEmpty());
    QVERIFY(!r.arguments().contains("--spec"));
  }

  // The user's own series (issue 104 §3): before Start the form says what it found and draws an
  // example task in the data's units; a bad file is refused in words, naming the line; the job
  // then trains on the file, and its checkpoint records the file and the standardisation.
  void ownSeriesIsPreviewedThenTrained() {
    const auto csv = m_dir.filePath("level.csv");
    {
      QFile file(csv);
      QVERIFY(file.open(QIODevice::WriteOnly));
      QByteArray text = "when,level,flow\n";
      for (int h = 0; h < 600; ++h) {
        text += npe::format_date_time(1.2e9 + 3600.0 * h).c_str();
        text += "," + QByteArray::number(100.0 + 20.0 * std::sin(h / 3.8)) + "," +
                QByteArray::number(h) + "\n";
      }
      file.write(text);
    }
    TrainingTab tab;
    auto* preview = tab.findChild<npe::widgets::TaskDataPreview*>();
    QVERIFY(preview);
    auto r = endless("series.pt", "tetnp");
    r.task = "series";
    r.data_path = csv;
    r.task_options = "y=level window=48";
    r.steps = 3;
    tab.setFormRequest(r);
    QTRY_VERIFY_WITH_TIMEOUT(!preview->busy() && preview->source(), kTimeoutMs);
    const auto summary = preview->summary();
    QVERIFY2(summary.contains("600 rows") && summary.contains("hours since") &&
                 summary.contains("y: level") && summary.contains("window of 48 h"),
             qPrintable(summary));
    QVERIFY(preview->examplePlot()->isVisibleTo(&tab));
    // The example is in the data's units: levels around 100, not standardised ones.
    const auto* context = preview->examplePlot()->graph(1)->data().data();
    QVERIFY(context->size() > 0);
    QVERIFY(context->constBegin()->value > 70.0 && context->constBegin()->value < 130.0);
    const auto recipe = r.recipe();
    QCOMPARE(recipe.task_options.value("data", std::string()), csv.toStdString());
    QCOMPARE(recipe.task_options.value("window", 0.0), 48.0);

    // Settings and files that cannot work are refused before anything starts, in words.
    auto bad = r;
    bad.task_options = "window";
    QVERIFY(npe::widgets::validate_request(bad).join(' ').contains("KEY=VALUE"));
    const auto broken = m_dir.filePath("broken.csv");
    {
      QFile file(broken);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write("when,level\n2010-01-01 00:00,1\n2010-01-01 01:00,high\n");
    }
    bad = r;
    bad.data_path = broken;
    tab.setFormRequest(bad);
    QTRY_VERIFY_WITH_TIMEOUT(!preview->busy() && preview->summary().contains("line 3"), kTimeoutMs);
    QVERIFY(!preview->source());
    QVERIFY(tab.submit().join(' ').contains("line 3"));
    QCOMPARE(tab.jobCount(), 0);

    tab.setFormRequest(r);
    QVERIFY(tab.submit().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Finished, kTimeoutMs);
    const auto meta = npe::read_checkpoint_metadata(tab.jobCheckpoint(0).toStdString());
    QCOMPARE(QString::fromStdString(meta.task_name()), QString("series"));
    QCOMPARE(QString::fromStdString(meta.task.value("data", std::string())), csv);
    QCOMPARE(meta.task.value("window", 0.0), 48.0);
    QCOMPARE(meta.task["y_std"].size(), size_t(1));
  }

  // A folder of the user's colour pictures: chosen as "My pictures…" would, it becomes the
  // pictures task; the preview says what was read and shows an example task in colour; a
  // short job trains a model with three outputs.
  void ownPicturesArePreviewedThenTrained() {
    const QDir folder(m_dir.filePath("holiday"));
    QVERIFY(folder.mkpath("beach"));
    for (int k = 0; k < 24; ++k) {
      QImage picture(10, 10, QImage::Format_RGB32);
      picture.fill(QColor(200, 40 + 5 * k, 30));
      QVERIFY(picture.save(folder.filePath(QString("beach/%1.png").arg(k))));
    }
    TrainingTab tab;
    auto* preview = tab.findChild<npe::widgets::TaskDataPreview*>();
    QVERIFY(preview);
    tab.useOwnData(folder.path());
    QCOMPARE(tab.formRequest().task, QString("pictures"));
    QTRY_VERIFY_WITH_TIMEOUT(!preview->busy() && preview->source(), kTimeoutMs);
    const auto summary = preview->summary();
    QVERIFY2(summary.contains("24 pictures (PNG/JPEG folder), colour, 10 x 10"),
             qPrintable(summary));
    QVERIFY(preview->examplePicture()->isVisibleTo(&tab));
    // The example is drawn in the pictures' colour: a red pixel somewhere on the canvas.
    const auto example = preview->examplePicture()->pixmap().toImage();
    bool red = false;
    for (int y = 0; y < example.height() && !red; ++y) {
      for (int x = 0; x < example.width() && !red; ++x) red = qRed(example.pixel(x, y)) == 200;
    }
    QVERIFY(red);
    auto r = tab.formRequest();
    r.model = "cnp";
    r.steps = 2;
    r.batch_size = 4;
    r.validation_tasks = 4;
    r.device = "cpu";
    r.task_options = "max_targets=32";
    r.output_path = m_dir.filePath("pictures.pt");
    tab.setFormRequest(r);
    const auto problems = tab.submit();
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(" ")));
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Finished, kTimeoutMs);
    const auto meta = npe::read_checkpoint_metadata(tab.jobCheckpoint(0).toStdString());
    QCOMPARE(QString::fromStdString(meta.task_name()), QString("pictures"));
    QCOMPARE(QString::fromStdString(meta.task.value("colour", std::string())), QString("rgb"));
  }

  void tinyJobUpdatesCurvesPausesResumesAndStops() {
    TrainingTab tab;
    auto* progress = tab.findChild<QProgressBar*>();
    QVERIFY(progress);
    QCOMPARE(progress->text(), QString());  // no job: no "0 / 1"
    tab.setFormRequest(endless("tiny.pt"));
    QVERIFY(tab.submit().isEmpty());
    QCOMPARE(tab.jobCount(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Running, kTimeoutMs);
    QVERIFY2(progress->text().endsWith(" / 1000000"), qPrintable(progress->text()));
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobHistory(0).validation_ll.size() >= 2, kTimeoutMs);
    QVERIFY(tab.curves()->pointCount(0) > 0);   // loss
    QVERIFY(tab.curves()->pointCount(1) >= 2);  // validation
    QVERIFY(tab.curves()->pointCount(3) >= 2);  // equivariance error
    QVERIFY(!tab.jobHistory(0).shifted_ll.empty());

    tab.pauseJob(0);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Paused, kTimeoutMs);
    const int paused_at = tab.jobStep(0);
    QTest::qWait(600);
    QCOMPARE(tab.jobStep(0), paused_at);  // no progress while paused
    tab.resumeJob(0);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Running, kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobStep(0) > paused_at, kTimeoutMs);

    tab.stopJob(0);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Stopped, kTimeoutMs);
    const auto meta = npe::read_checkpoint_metadata(tab.jobCheckpoint(0).toStdString());
    QCOMPARE(meta.steps, tab.jobStep(0));
    QVERIFY(meta.planned_steps > meta.steps);

    // Resume continues the checkpoint in a new process.
    tab.resumeJob(0);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Running, kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobStep(0) > meta.steps, kTimeoutMs);
    tab.stopJob(0);
    QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Stopped, kTimeoutMs);
  }

  // npe train dying of a signal mid-run (a crash, an abort): the job shows failed and says so,
  // the checkpoint on disk is a whole one of a checkpoint step, and Resume continues it.
  void aTrainingProcessThatCrashesLeavesAResumableCheckpoint() {
    // In a sanitizer build npe's AddressSanitizer catches the SIGSEGV sent here, reports it and
    // exits with status 1 (an ordinary failure, not a crash). Let the signal end it, as it does
    // in every other build (the variable means nothing there).
    const QByteArray asan_options = qgetenv("ASAN_OPTIONS");
    qputenv("ASAN_OPTIONS", asan_options + (asan_options.isEmpty() ? "" : ":") + "handle_segv=0");
    const auto restore = qScopeGuard([&] {
      if (asan_options.isNull()) {
        qunsetenv("ASAN_OPTIONS");
      } else {
        qputenv("ASAN_OPTIONS", asan_options);
      }
    });
    for (const int signal : {SIGSEGV, SIGABRT}) {
      TrainingTab tab;
      tab.setFormRequest(endless(QString("crash%1.pt").arg(signal)));
      QVERIFY(tab.submit().isEmpty());
      QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Running, kTimeoutMs);
      QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(tab.jobCheckpoint(0)) && tab.jobStep(0) >= 10,
                               kTimeoutMs);
      const qint64 pid = tab.queue()->job(0).process->processId();
      QVERIFY(pid > 0);
      QCOMPARE(::kill(static_cast<pid_t>(pid), signal), 0);
      QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Failed, kTimeoutMs);
      const auto log = tab.queue()->job(0).log.join('\n');
      QVERIFY2(log.contains("crashed"), qPrintable(log));
      const auto meta = npe::read_checkpoint_metadata(tab.jobCheckpoint(0).toStdString());
      QVERIFY(meta.steps > 0);
      QCOMPARE(meta.steps % 5, 0);
      tab.resumeJob(0);
      QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Running, kTimeoutMs);
      QTRY_VERIFY_WITH_TIMEOUT(tab.jobStep(0) > meta.steps, kTimeoutMs);
      tab.stopJob(0);
      QTRY_VERIFY_WITH_TIMEOUT(tab.jobState(0) == State::Stopped, kTimeoutMs);
    }
  }

  // Closing the window (or a failed test) destroys the tab with a job running: its process is
  // killed and nothing it reports reaches the tab being destroyed.
  void destroyingTheTabWithARunningJobIsClean() {
    auto tab = std::make_unique<TrainingTab>();
    tab->setFormRequest(endless("destroyed.pt"));
    QVERIFY(tab->submit().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(tab->jobState(0) == State::Running, kTimeoutMs);
    tab.reset();
    QTest::qWait(100);  // any event queued for the tab would be delivered here
  }

  // The queue runs without a view (TrainingQueue is what the tab shows): one job per device at
  // a time, a second job writing the same file is refused, and a stopped job lets the next run.
  void oneJobPerDeviceAtATime() {
    npe::widgets::TrainingQueue queue;
    QVERIFY(queue.add(endless("first.pt"), false).isEmpty());
    const auto same_file = queue.add(endless("first.pt"), false);
    QVERIFY(!same_file.isEmpty() && same_file.front().contains("Another job writes"));
    QVERIFY(queue.add(endless("second.pt"), false).isEmpty());
    QCOMPARE(queue.count(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(queue.job(0).state == State::Running, kTimeoutMs);
    QCOMPARE(queue.job(1).state, State::Queued);
    queue.stop(0);
    QTRY_VERIFY_WITH_TIMEOUT(queue.job(1).state == State::Running, kTimeoutMs);
    QCOMPARE(queue.job(0).state, State::Stopped);
    queue.stop(1);
    QTRY_VERIFY_WITH_TIMEOUT(queue.job(1).state == State::Stopped, kTimeoutMs);
  }
};

QTEST_MAIN(TrainingTabTest)
#include "training_tab_test.moc"
