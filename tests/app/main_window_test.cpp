// The main window's own behaviour: what it shows around the tabs.
#include <QSignalSpy>
#include <QTabWidget>
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "common/explorer_panel.h"
#include "function1d/function_explorer.h"
#include "image/image_explorer.h"
#include "main_window.h"
#include "training/training_tab.h"

using npe::app::MainWindow;

class MainWindowTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
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
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
