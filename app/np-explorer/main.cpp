// np-explorer: the NP Explorer GUI.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <thread>

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QIcon>
#include <QScreen>
#include <QSize>
#include <QSurfaceFormat>
#include <QTimer>

#include "common/dialogs.h"
#include "common/explorer_panel.h"
#include "edit_latency_probe.h"
#include "function1d/episode_runner.h"
#include "function1d/function_explorer.h"
#include "function1d/suggestion_box.h"
#include "main_window.h"
#include "maps/map_episode.h"
#include "maps/map_explorer.h"
#include "npe/blas_kernels.h"
#include "npe/crash_report.h"
#include "npe/errors.h"
#include "npe/runtime.h"
#include "training/task_data_preview.h"
#include "training/training_tab.h"
#include "unattended_exit.h"

namespace {

bool asks_for_help_or_version(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == "--") break;
    for (const char* name : {"-h", "--help", "-?", "--help-all", "-v", "--version"})
      if (argument == name) return true;
  }
  return false;
}

// Screenshots and latency runs use one window size, so that pictures and timings compare,
// unless the screen is smaller (a 1366 x 768 laptop): then the window fills the screen, as a
// user's window would.
QSize screenshot_size() {
  QSize size(1400, 860);
  if (const auto* screen = QGuiApplication::primaryScreen())
    size = size.boundedTo(screen->availableGeometry().size());
  return size;
}

}  // namespace

int main(int argc, char** argv) {
  npe::install_crash_report("np-explorer");
  // Before anything else but the crash report: this may run the program again with other BLAS
  // kernels.
  npe::use_the_cpus_blas_kernels(argv);
  // The map view renders with VTK, which needs an OpenGL 3.2 core context; this must be the
  // default before the application object exists.
  QSurfaceFormat format;
  format.setRenderableType(QSurfaceFormat::OpenGL);
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setDepthBufferSize(24);
  format.setStencilBufferSize(8);
  QSurfaceFormat::setDefaultFormat(format);
  QCoreApplication::setOrganizationName("np-explorer");
  QCoreApplication::setApplicationName("np-explorer");
  QCoreApplication::setApplicationVersion(NPE_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription("Interactive explorer of neural processes");
  parser.addHelpOption();
  parser.addVersionOption();
  // Not "--session": Qt's X11 session management takes -session/--session from the command line
  // before the program sees it.
  QCommandLineOption session({"s", "open"}, "Open a session file.", "FILE");
  QCommandLineOption screenshot(
      "screenshot", "Render the window (with predictions) to an image and exit.", "OUT.png");
  QCommandLineOption threads(
      "threads",
      "Intra-op threads for the models (0 = all cores but one, which stays free for drawing).", "N",
      "0");
  QCommandLineOption latency("measure-edit-latency",
                             "Move a context point N times, print the median time from edit to "
                             "redrawn plot, and exit.",
                             "N");
  QCommandLineOption device("device", "Where neural models run: cpu, cuda or auto.", "DEVICE",
                            "auto");
  QCommandLineOption shift("shift", "Start with the 1-D context shifted by D (|D| <= 1e6).", "D");
  QCommandLineOption tab("tab", "Start on this tab: functions, images, maps or training.", "NAME");
  QCommandLineOption train_on(
      "train-on",
      "Start on the Training tab with this file or folder as the data: a series (CSV, TSV or "
      "whitespace with a header), a gridded temperature file (NetCDF, GRIB), or pictures (a "
      "folder of PNG or JPEG files, an IDX file, CIFAR-10's batches).",
      "PATH");
  QCommandLineOption training_job(
      "training-job", "Add the training job of this checkpoint to the Training tab.", "FILE");
  QCommandLineOption map_3d("map-3d", "Show the map tab's 3-D relief view.");
  QCommandLineOption samples(
      "samples", "Draw K coherent function samples per joint model on the 1-D tab.", "K");
  QCommandLineOption observe(
      "observe",
      "On the 1-D tab (or with --tab maps, the Maps tab), observe the hidden truth N times with "
      "STRATEGY (random, gp-uncertainty or suggestion) from the context shown; repeated, each "
      "strategy's run in turn, one episode.",
      "STRATEGY:N");
  QCommandLineOption time_limit("time-limit",
                                "Unattended runs (--screenshot, --measure-edit-latency) give up "
                                "after S seconds and exit with status 1 (default 120).",
                                "S", "120");
  parser.addOptions({session, screenshot, threads, latency, device, shift, tab, training_job,
                     train_on, map_3d, samples, observe, time_limit});
  parser.addPositionalArgument(
      "files", "Sessions (.json), checkpoints (.pt) or pictures (.png, .jpg, ...) to open.");
  if (asks_for_help_or_version(argc, argv)) {
    // Answered without a display (over ssh, in a package build): a QApplication would first
    // need a platform plugin to connect to one, and fail.
    QCoreApplication help(argc, argv);
    parser.process(help);  // prints and exits
    return 0;
  }
  QApplication app(argc, argv);
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/np-explorer.svg")));
  parser.process(app);

  bool threads_ok = false;
  const int thread_count = parser.value(threads).toInt(&threads_ok);
  if (!threads_ok || thread_count < 0 || thread_count > npe::kMaxThreads) {
    std::fprintf(stderr, "np-explorer: --threads expects a whole number from 0 to %d\n",
                 npe::kMaxThreads);
    return 2;
  }
  npe::configure_allocator();
  // The explorer's predictions are small (hundreds of points): on a machine with few cores,
  // model threads that compete with the GUI thread and the display server for every core cost
  // more than they gain (measured on 2 cores: edit-to-view median 45.8 ms with 2 threads,
  // 37.0 ms with 1), so by default one core is left to the drawing.
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  npe::configure_threads(thread_count > 0 ? thread_count : std::max(1, cores - 1));

  torch::Device model_device = torch::kCPU;
  try {
    model_device = npe::parse_device(parser.value(device).toStdString());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "np-explorer: %s\n", e.what());
    return 2;
  }
  npe::widgets::setDialogsAllowed(!parser.isSet(screenshot) && !parser.isSet(latency));
  npe::app::MainWindow window(model_device);
  bool opened = true;
  if (parser.isSet(session)) opened = window.openFile(parser.value(session));
  for (const auto& file : parser.positionalArguments()) opened = window.openFile(file) && opened;
  if (parser.isSet(shift)) {
    bool ok = false;
    const double value = parser.value(shift).toDouble(&ok);
    constexpr double limit = npe::widgets::FunctionExplorer::kMaxShift;
    if (!ok || !(std::abs(value) <= limit)) {
      std::fprintf(stderr, "np-explorer: --shift expects a number in [-%g, %g]\n", limit, limit);
      return 2;
    }
    window.functionExplorer()->setShift(value);
  }
  if (parser.isSet(samples)) {
    bool ok = false;
    const int count = parser.value(samples).toInt(&ok);
    if (!ok || count < 0 || count > 50) {
      std::fprintf(stderr, "np-explorer: --samples expects a whole number from 0 to 50\n");
      return 2;
    }
    window.functionExplorer()->setSamples(count);
  }
  if (parser.isSet(observe)) {
    std::vector<npe::widgets::EpisodeStep> steps;
    for (const auto& value : parser.values(observe)) {
      bool ok = false;
      npe::widgets::EpisodeStep step;
      step.count = value.section(':', 1).toInt(&ok);
      try {
        step.strategy = npe::widgets::strategy_from_id(value.section(':', 0, 0));
      } catch (const npe::Error&) {
        ok = false;
      }
      if (!ok || step.count < 1 || step.count > 200 ||
          step.strategy == npe::widgets::ObserveStrategy::click) {
        std::fprintf(stderr,
                     "np-explorer: --observe expects STRATEGY:N, STRATEGY random, gp-uncertainty "
                     "or suggestion and N from 1 to 200 (not '%s')\n",
                     qPrintable(value));
        return 2;
      }
      steps.push_back(step);
    }
    if (parser.value(tab) == "maps") {
      window.mapExplorer()->episodeRunner()->runScript(std::move(steps));
    } else {
      for (const auto& step : steps) {
        if (step.strategy == npe::widgets::ObserveStrategy::suggestion) {
          window.functionExplorer()->suggestionBox()->setEnabledSuggestion(true);
        }
      }
      window.functionExplorer()->episodeRunner()->runScript(std::move(steps));
    }
  }
  if (parser.isSet(tab) && !window.showPanel(parser.value(tab))) {
    std::fprintf(stderr, "np-explorer: --tab expects one of: %s\n",
                 qPrintable(window.tabIds().join(", ")));
    return 2;
  }
  if (parser.isSet(training_job)) {
    try {
      window.trainingTab()->openJob(parser.value(training_job));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "np-explorer: %s\n", e.what());
      opened = false;
    }
  }
  if (parser.isSet(train_on)) {
    window.showPanel("training");
    window.trainingTab()->useOwnData(parser.value(train_on));
  }
  if (parser.isSet(map_3d)) window.mapExplorer()->setThreeD(true);
  auto* panel = window.currentPanel();

  bool limit_ok = false;
  const double limit_s = parser.value(time_limit).toDouble(&limit_ok);
  if (!limit_ok || !(limit_s > 0.0 && limit_s <= 86400.0)) {
    std::fprintf(stderr, "np-explorer: --time-limit expects seconds in (0, 86400]\n");
    return 2;
  }
  const int limit_ms = static_cast<int>(limit_s * 1000.0);

  if (parser.isSet(latency)) {
    const int edits = parser.value(latency).toInt();
    if (edits < 1) {
      std::fprintf(stderr, "np-explorer: --measure-edit-latency expects a positive count\n");
      return 2;
    }
    // A tab without edits (training) or without data says so at once instead of waiting for a
    // first prediction round that never comes.
    if (!panel) {
      std::fprintf(stderr,
                   "np-explorer: --measure-edit-latency measures an explorer tab (functions, "
                   "images or maps); this tab has no edits to measure\n");
      return 1;
    }
    if (const QString reason = panel->unavailableReason(); !reason.isEmpty()) {
      std::fprintf(stderr, "np-explorer: nothing to measure: %s\n", qPrintable(reason));
      return 1;
    }
    window.resize(screenshot_size());
    window.show();
    npe::app::EditLatencyProbe probe(panel, edits, limit_ms);
    return app.exec();
  }

  if (!parser.isSet(screenshot)) {
    window.show();
    return app.exec();
  }

  // Screenshot mode: wait for the settled (refined) predictions, then grab the real window.
  const QString out = parser.value(screenshot);
  window.resize(screenshot_size());
  window.show();
  int status = opened ? 0 : 1;
  auto save = [&](bool complete) {
    const bool saved = window.grab().save(out);
    // What the status bar says (models' times, any subsets of a large context).
    // (Nothing on a tab without one: the Training tab with no job.)
    if (!window.statusText().isEmpty()) {
      std::printf("np-explorer: %s\n", qPrintable(window.statusText()));
    }
    std::fflush(stdout);
    if (!saved) std::fprintf(stderr, "np-explorer: cannot write %s\n", qPrintable(out));
    if (!complete) {
      std::fprintf(stderr,
                   "np-explorer: predictions did not finish within %g s (--time-limit); the "
                   "screenshot shows the models that had finished\n",
                   limit_s);
      npe::app::exit_without_waiting_for_models(1);
    }
    app.exit(saved ? status : 1);
  };
  if (!panel || !panel->unavailableReason().isEmpty()) {
    // The training tab has no predictions to wait for (its curves are drawn at once), nor has
    // a tab without data (it shows why).
    if (panel) std::fprintf(stderr, "np-explorer: %s\n", qPrintable(panel->unavailableReason()));
    // The Training tab reads the user's data (--train-on) on a worker: shoot once it is read.
    auto* preview = window.trainingTab()->findChild<npe::widgets::TaskDataPreview*>();
    auto* poll = new QTimer(&app);
    QObject::connect(poll, &QTimer::timeout, &app, [&, poll, preview] {
      if (preview && preview->busy()) return;
      poll->stop();
      save(true);
    });
    QTimer::singleShot(800, &app, [poll] { poll->start(100); });
    QTimer::singleShot(limit_ms, &app, [&] { save(false); });
    return app.exec();
  }
  QObject::connect(panel, &npe::widgets::ExplorerPanel::predictionsUpdated, &app,
                   [&](bool refined) {
                     if (!refined) return;
                     // Once what it waited for is drawn; an episode's observations go on
                     // until its last round (a later refined round shoots then).
                     auto shoot = [&] {
                       if (panel->extrasPending()) return;
                       QTimer::singleShot(200, &app, [&] { save(true); });
                     };
                     if (panel->extrasPending()) {
                       QObject::connect(panel, &npe::widgets::ExplorerPanel::extrasDone, &app,
                                        shoot, Qt::SingleShotConnection);
                     } else {
                       shoot();
                     }
                   });
  QTimer::singleShot(limit_ms, &app, [&] { save(false); });
  return app.exec();
}
