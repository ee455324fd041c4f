// The main window's own behaviour: what it shows around the tabs.
#include <QSignalSpy>
#include <QTabWidget>
#include <QtTest>

#include "common/explorer_panel.h"
#include "function1d/function_explorer.h"
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
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
