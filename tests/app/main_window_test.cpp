// The main window's own behaviour: what it shows around the tabs.
#include <QSignalSpy>
#include <QTabWidget>
#include <QTextBrowser>
#include <QToolButton>
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "common/explorer_panel.h"
#include "common/model_list.h"
#include "function1d/function_explorer.h"
#include "help_browser.h"
#include "image/image_explorer.h"
#include "main_window.h"
#include "training/training_request.h"
#include "training/training_tab.h"

using npe::app::MainWindow;

class MainWindowTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Every tab's "?" (and F1) opens its own short page, rendered from the compiled-in Markdown:
  // what it shows, translation equivariance there, three things to try, the paper. The user
  // guide opens, its links lead to the guide's pages and their pictures load, offline.
  void everyTabsQuestionMarkOpensItsPage() {
    MainWindow window(torch::kCPU);
    QCOMPARE(window.helpBrowser(), nullptr);
    const QStringList ids = window.tabIds();
    QCOMPARE(ids, (QStringList{"functions", "images", "maps", "training"}));
    const QMap<QString, QString> titles = {{"functions", "The 1-D tab"},
                                           {"images", "The Images tab"},
                                           {"maps", "The Maps tab"},
                                           {"training", "The Training tab"}};
    auto* corner = qobject_cast<QToolButton*>(
        window.findChild<QTabWidget*>()->cornerWidget(Qt::TopRightCorner));
    QVERIFY(corner);
    for (const auto& id : ids) {
      QVERIFY(window.showPanel(id));
      corner->click();
      auto* help = window.helpBrowser();
      QVERIFY(help && help->isVisible());
      QCOMPARE(help->page(), npe::app::tab_help_page(id));
      const auto text = help->text();
      QVERIFY2(text.startsWith(titles[id]), qPrintable(id + ": " + text.left(80)));
      for (const char* part : {"What it shows", "Translation equivariance here",
                               "Three things to try", "In the paper"}) {
        QVERIFY2(text.contains(part), qPrintable(id + ": no '" + part + "'"));
      }
      QVERIFY2(!text.contains("**") && !text.contains("# "), qPrintable(id + ": raw Markdown"));
    }
    window.showUserGuide();
    auto* help = window.helpBrowser();
    QCOMPARE(help->page(), npe::app::user_guide_page());
    QVERIFY(help->text().contains("The 1-D explorer"));
    help->showPage(QUrl("qrc:/guide/functions.md"));
    QVERIFY(help->text().contains("Left click"));
    auto* browser = help->findChild<QTextBrowser*>();
    QVERIFY(browser);
    const auto picture = browser->document()->resource(QTextDocument::ImageResource,
                                                       QUrl("../np-explorer-samples.png"));
    QVERIFY(picture.isValid() && !picture.value<QImage>().isNull());
  }

  void theStatusBarShowsTheMessageOfTheTabInFront() {
    MainWindow window(torch::kCPU);
    QVERIFY(window.showPanel("functions"));
    Q_EMIT window.functionExplorer()->statusMessage("1-D: 3 context points");
    QCOMPARE(window.statusText(), QString("1-D: 3 context points"));
    // A message of a tab behind does not replace the one in front...
    Q_EMIT window.trainingTab()->statusMessage("training: step 400");
    QCOMPARE(window.statusText(), QString("1-D: 3 context points"));
    // ...and switching tabs shows that tab's latest message, or none.
    QVERIFY(window.showPanel("training"));
    QCOMPARE(window.statusText(), QString("training: step 400"));
    QVERIFY(window.showPanel("images"));
    QVERIFY(!window.statusText().contains("training"));
    QVERIFY(!window.statusText().contains("1-D"));
    QVERIFY(window.showPanel("functions"));
    QCOMPARE(window.statusText(), QString("1-D: 3 context points"));
  }

  // A TorchScript model is told by its content, whatever its suffix, and goes to the tab of its
  // task: the 1-D tab for a gp1d model, the Images tab for a tfmnist one.
  void torchScriptModelsOpenInTheTabOfTheirTask() {
    const QDir models(qEnvironmentVariable("NPE_TORCHSCRIPT_MODELS_DIR"));
    if (models.path().isEmpty() || !models.exists("te_np.pt"))
      QSKIP("no TorchScript test models (python3 cannot import torch)");
    QTemporaryDir dir;
    const auto one_d = dir.filePath("my model.ts"), image = dir.filePath("image-model.jit");
    QVERIFY(QFile::copy(models.filePath("te_np.pt"), one_d));
    QVERIFY(QFile::copy(models.filePath("image_np.pt"), image));
    MainWindow window(torch::kCPU);
    QVERIFY(window.openFile(one_d));
    QCOMPARE(window.currentPanel(),
             static_cast<npe::widgets::ExplorerPanel*>(window.functionExplorer()));
    QVERIFY(window.openFile(image));
    QCOMPARE(window.currentPanel(),
             static_cast<npe::widgets::ExplorerPanel*>(window.imageExplorer()));
    // A file that is neither is refused with a message, not opened.
    const auto text = dir.filePath("notes.ts");
    QFile file(text);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a model");
    file.close();
    QVERIFY(!window.openFile(text));
  }
  // "Use in explorer" on a job in the training tab puts the model being trained into the tab of
  // its task (a gp1d model: the 1-D tab) and replaces it there at each new checkpoint.
  void useInExplorerShowsTheModelBeingTrainedAndRefreshesIt() {
    QTemporaryDir dir;
    MainWindow window(torch::kCPU);
    auto* tab = window.trainingTab();
    npe::widgets::TrainingRequest request;
    request.task = "gp1d";
    request.model = "tnp";
    request.size = "small";
    request.steps = 1000000;  // until stopped
    request.batch_size = 4;
    request.device = "cpu";
    request.checkpoint_every = 5;
    request.validation_every = 5;
    request.output_path = dir.filePath("watched.pt");
    tab->setFormRequest(request);
    QVERIFY(tab->submit().isEmpty());
    tab->useInExplorer(0);
    auto* list = window.functionExplorer()->findChild<npe::widgets::ModelList*>();
    QVERIFY(list);
    const auto entries_of_the_job = [&] {
      QStringList names;
      for (const auto& e : list->entries()) {
        if (e.checkpoint_path == tab->jobCheckpoint(0)) names << e.name;
      }
      return names;
    };
    constexpr int kTimeoutMs = 120000;
    QTRY_VERIFY_WITH_TIMEOUT(entries_of_the_job().value(0).contains("training, step"), kTimeoutMs);
    const auto first = entries_of_the_job().value(0);
    // A later checkpoint replaces the model in place: one entry, a later step.
    QTRY_VERIFY_WITH_TIMEOUT(entries_of_the_job().value(0) != first, kTimeoutMs);
    QCOMPARE(entries_of_the_job().size(), 1);
    tab->stopAllAndWait();
    QVERIFY(!tab->hasActiveJobs());
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
