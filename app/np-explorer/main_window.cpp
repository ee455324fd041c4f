#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QUndoStack>

#include "function_explorer.h"
#include "npe/errors.h"

namespace npe::app {
namespace {
constexpr int kMaxRecentFiles = 8;
}

MainWindow::MainWindow(torch::Device device, QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("NP Explorer"));
  setAcceptDrops(true);
  auto* tabs = new QTabWidget(this);
  m_explorer = new widgets::FunctionExplorer(tabs, device);
  tabs->addTab(m_explorer, tr("1-D functions"));
  setCentralWidget(tabs);
  m_status = new QLabel(this);
  statusBar()->addWidget(m_status, 1);
  connect(m_explorer, &widgets::FunctionExplorer::statusMessage, m_status, &QLabel::setText);
  buildMenus();
  loadSettings();
}

void MainWindow::buildMenus() {
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open Session or Checkpoint…"), QKeySequence::Open, this, [this] {
    const auto path = QFileDialog::getOpenFileName(
        this, tr("Open"), {}, tr("Sessions and checkpoints (*.json *.pt);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
  });
  m_recent_menu = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("&Save Session"), QKeySequence::Save, this, [this] { saveSession(false); });
  file->addAction(tr("Save Session &As…"), QKeySequence::SaveAs, this,
                  [this] { saveSession(true); });
  file->addSeparator();
  file->addAction(tr("&Export Plot…"), QKeySequence(tr("Ctrl+E")), this, [this] { exportPlot(); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  auto* edit = menuBar()->addMenu(tr("&Edit"));
  auto* undo = m_explorer->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  auto* redo = m_explorer->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcuts({QKeySequence(tr("Ctrl+Shift+Z")), QKeySequence::Redo});
  edit->addAction(undo);
  edit->addAction(redo);

  auto* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Fit View"), QKeySequence(tr("Ctrl+0")), m_explorer,
                  &widgets::FunctionExplorer::fitView);

  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&How to use"), this, [this] {
    QMessageBox::information(
        this, tr("How to use NP Explorer"),
        tr("Left click: add a context point. Drag: move it. Right click or Delete over a "
           "point: remove it. Ctrl+Z / Ctrl+Shift+Z: undo / redo.\nMouse wheel: zoom. Middle "
           "drag: pan. Ctrl+0: fit view.\nDrag Δ to translate the data: translation-equivariant "
           "models (TE-TNP, ConvCNP, GP) follow it; TNP breaks down once the data leave the "
           "shaded training range."));
  });
  rebuildRecentMenu();
}

bool MainWindow::openFile(const QString& path) {
  try {
    if (QFileInfo(path).suffix().toLower() == "pt") {
      m_explorer->openCheckpoint(path);
    } else {
      m_explorer->loadSession(path);
      m_session_path = path;
    }
    addRecentFile(QFileInfo(path).absoluteFilePath());
    return true;
  } catch (const Error& e) {
    showError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), QString::fromUtf8(e.what()));
    return false;
  }
}

void MainWindow::saveSession(bool choose_path) {
  QString path = m_session_path;
  if (choose_path || path.isEmpty()) {
    path = QFileDialog::getSaveFileName(this, tr("Save session"), "session.json",
                                        tr("Sessions (*.json)"));
    if (path.isEmpty()) return;
  }
  try {
    m_explorer->saveSession(path);
    m_session_path = path;
    addRecentFile(QFileInfo(path).absoluteFilePath());
    statusBar()->showMessage(tr("Saved %1").arg(path), 3000);
  } catch (const Error& e) {
    showError(tr("Cannot save session"), QString::fromUtf8(e.what()));
  }
}

void MainWindow::exportPlot() {
  QString filter;
  auto path =
      QFileDialog::getSaveFileName(this, tr("Export plot"), "np-explorer.png",
                                   tr("PNG image (*.png);;PDF (*.pdf);;SVG (*.svg)"), &filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) {
    path += filter.contains("pdf") ? ".pdf" : filter.contains("svg") ? ".svg" : ".png";
  }
  try {
    m_explorer->exportPlot(path);
    statusBar()->showMessage(tr("Exported %1").arg(path), 3000);
  } catch (const Error& e) {
    showError(tr("Cannot export plot"), QString::fromUtf8(e.what()));
  }
}

void MainWindow::addRecentFile(const QString& path) {
  QSettings settings;
  auto files = settings.value("recentFiles").toStringList();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  settings.setValue("recentFiles", files);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  m_recent_menu->clear();
  const auto files = QSettings().value("recentFiles").toStringList();
  for (const auto& path : files) {
    m_recent_menu->addAction(QFileInfo(path).fileName(), this, [this, path] { openFile(path); })
        ->setToolTip(path);
  }
  m_recent_menu->setEnabled(!files.isEmpty());
}

void MainWindow::showError(const QString& title, const QString& message) {
  // Offscreen runs (tests, --screenshot) have nobody to click a dialog away.
  if (QGuiApplication::platformName() == "offscreen") {
    qWarning("%s: %s", qPrintable(title), qPrintable(message));
    return;
  }
  QMessageBox::critical(this, title, message);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  for (const auto& url : event->mimeData()->urls()) {
    const auto suffix = QFileInfo(url.toLocalFile()).suffix().toLower();
    if (suffix == "json" || suffix == "pt") {
      event->acceptProposedAction();
      return;
    }
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const auto& url : event->mimeData()->urls()) openFile(url.toLocalFile());
  event->acceptProposedAction();
}

void MainWindow::loadSettings() {
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
}

void MainWindow::saveSettings() const {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveSettings();
  event->accept();
}

}  // namespace npe::app
