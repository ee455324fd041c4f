#include "main_window.h"

#include <cstdio>

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
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>
#include <QUndoGroup>
#include <QUndoStack>

#include "common/dialogs.h"
#include "common/explorer_panel.h"
#include "common/session_file.h"
#include "function1d/function_explorer.h"
#include "help_browser.h"
#include "image/image_explorer.h"
#include "maps/map_explorer.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/predictors/torchscript_predictor.h"
#include "training/training_tab.h"

namespace npe::app {
namespace {
constexpr int kMaxRecentFiles = 8;
}

MainWindow::MainWindow(torch::Device device, QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("NP Explorer"));
  setAcceptDrops(true);
  m_tabs = new QTabWidget(this);
  m_undo_group = new QUndoGroup(this);
  setCentralWidget(m_tabs);
  m_status = new QLabel(this);
  statusBar()->addWidget(m_status, 1);
  m_functions = new widgets::FunctionExplorer(m_tabs, device);
  addPanel(m_functions);
  m_images = new widgets::ImageExplorer(m_tabs, device);
  addPanel(m_images);
  m_maps = new widgets::MapExplorer(m_tabs, device);
  addPanel(m_maps);
  // The training tab is not an explorer: no undo stack, no session section.
  m_training = new widgets::TrainingTab(m_tabs);
  m_tabs->addTab(m_training, tr("Training"));
  connect(m_training, &widgets::TrainingTab::checkpointForExplorer, this,
          &MainWindow::showTrainingCheckpoint);
  connect(m_training, &widgets::TrainingTab::statusMessage, this,
          [this](const QString& text) { setTabMessage(m_training, text); });
  connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::bringToFront);
  // The "?" of every tab: its short page in the help window.
  auto* help_button = new QToolButton(m_tabs);
  help_button->setText(tr("?"));
  help_button->setToolTip(tr("What this tab shows, what to try, and the paper behind it (F1)"));
  help_button->setAutoRaise(true);
  connect(help_button, &QToolButton::clicked, this, &MainWindow::showTabHelp);
  m_tabs->setCornerWidget(help_button, Qt::TopRightCorner);
  bringToFront(m_tabs->currentIndex());
  buildMenus();
  loadSettings();
}

void MainWindow::addPanel(widgets::ExplorerPanel* panel) {
  m_panels.push_back(panel);
  m_tabs->addTab(panel, panel->title());
  m_undo_group->addStack(panel->undoStack());
  connect(panel, &widgets::ExplorerPanel::statusMessage, this,
          [this, panel](const QString& text) { setTabMessage(panel, text); });
}

void MainWindow::setTabMessage(QWidget* tab, const QString& text) {
  m_tab_messages.insert(tab, text);
  if (tab == m_tabs->currentWidget()) m_status->setText(text);
}

QString MainWindow::statusText() const {
  return m_status->text();
}

void MainWindow::bringToFront(int index) {
  // Each tab's messages describe that tab ("30 stations", "training step 400"): the status bar
  // follows the tab in front instead of keeping the last tab's words.
  m_status->setText(m_tab_messages.value(m_tabs->widget(index)));
  // Only the tab in front computes predictions; the others catch up when they are shown.
  for (size_t i = 0; i < m_panels.size(); ++i) {
    m_panels[i]->setActive(static_cast<int>(i) == index);
  }
  if (index >= 0 && index < static_cast<int>(m_panels.size())) {
    m_undo_group->setActiveStack(m_panels[index]->undoStack());
  }
}

widgets::ExplorerPanel* MainWindow::currentPanel() const {
  const int index = m_tabs->currentIndex();
  return index >= 0 && index < static_cast<int>(m_panels.size()) ? m_panels[index] : nullptr;
}

widgets::ExplorerPanel* MainWindow::panel(const QString& id) const {
  for (auto* p : m_panels) {
    if (p->panelId() == id) return p;
  }
  return nullptr;
}

bool MainWindow::showPanel(const QString& id) {
  if (id == "training") {
    m_tabs->setCurrentWidget(m_training);
    return true;
  }
  auto* p = panel(id);
  if (!p) return false;
  m_tabs->setCurrentWidget(p);
  return true;
}

void MainWindow::showTabHelp() {
  QString id = "training";
  if (auto* p = currentPanel()) id = p->panelId();
  if (!m_help) m_help = new HelpBrowser(this);
  m_help->showPage(tab_help_page(id));
}

void MainWindow::showUserGuide() {
  if (!m_help) m_help = new HelpBrowser(this);
  m_help->showPage(user_guide_page());
}

QStringList MainWindow::tabIds() const {
  QStringList ids;
  for (auto* p : m_panels) ids << p->panelId();
  return ids << "training";
}

void MainWindow::showTrainingCheckpoint(const QString& path) {
  try {
    const auto meta = read_model_metadata(path.toStdString());
    for (auto* p : m_panels) {
      if (p->acceptsCheckpoint(meta)) {
        p->openCheckpoint(path);
        setTabMessage(m_tabs->currentWidget(), tr("%1 (step %2) shown in the %3 tab")
                                                   .arg(QFileInfo(path).fileName())
                                                   .arg(meta.steps)
                                                   .arg(p->title()));
        return;
      }
    }
    setTabMessage(m_tabs->currentWidget(),
                  tr("No explorer tab shows models with D_x = %1").arg(meta.model.dim_x));
  } catch (const Error& e) {
    // A checkpoint that cannot be read now is reported; the next one is tried again.
    setTabMessage(m_tabs->currentWidget(),
                  tr("Cannot show %1: %2").arg(path, QString::fromUtf8(e.what())));
  }
}

void MainWindow::buildMenus() {
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
    // Every type some tab opens: sessions, checkpoints and the tabs' own data files.
    QStringList patterns{"*.json", "*.pt", "*.pth", "*.ts", "*.jit"};
    for (auto* p : m_panels) {
      for (const auto& suffix : p->dataSuffixes()) patterns << "*." + suffix;
    }
    patterns.removeDuplicates();
    const auto path = QFileDialog::getOpenFileName(
        this,
        tr("Open a session, checkpoint, data file or TorchScript model (which runs its own "
           "code)"),
        {}, tr("Sessions, models and data (%1);;All files (*)").arg(patterns.join(' ')));
    if (!path.isEmpty()) openFile(path);
  });
  m_recent_menu = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("&Save Session"), QKeySequence::Save, this, [this] { saveSession(false); });
  file->addAction(tr("Save Session &As…"), QKeySequence::SaveAs, this,
                  [this] { saveSession(true); });
  file->addSeparator();
  file->addAction(tr("&Export View…"), QKeySequence(tr("Ctrl+E")), this, [this] { exportView(); });
  file->addAction(tr("Export &Predictions…"), QKeySequence(tr("Ctrl+Shift+E")), this,
                  [this] { exportPredictions(); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  auto* edit = menuBar()->addMenu(tr("&Edit"));
  auto* undo = m_undo_group->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  auto* redo = m_undo_group->createRedoAction(this, tr("&Redo"));
  redo->setShortcuts({QKeySequence(tr("Ctrl+Shift+Z")), QKeySequence::Redo});
  edit->addAction(undo);
  edit->addAction(redo);

  auto* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Fit View"), QKeySequence(tr("Ctrl+0")), this, [this] {
    if (auto* p = currentPanel()) p->fitView();
  });

  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("About this &tab"), QKeySequence::HelpContents, this,
                  &MainWindow::showTabHelp);
  help->addAction(tr("&User guide"), this, &MainWindow::showUserGuide);
  help->addAction(tr("&How to use"), this, [this] {
    QMessageBox::information(
        this, tr("How to use NP Explorer"),
        tr("1-D functions — left click: add a context point; drag: move it; right click or "
           "Delete over a point: remove it. Mouse wheel: zoom; middle drag: pan; Ctrl+0: fit.\n"
           "Images — left button: paint context pixels; right button: erase; arrow keys or Δh/Δv: "
           "move the picture.\nCtrl+Z / Ctrl+Shift+Z: undo / redo in the current tab.\n"
           "Drag Δ to translate the data: translation-equivariant models follow it; the others "
           "break down once the data leave their training range."));
  });
  rebuildRecentMenu();
}

bool MainWindow::canOpen(const QString& path) const {
  const auto suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "json" || suffix == "pt" || is_torchscript_model(path.toStdString())) return true;
  for (auto* p : m_panels) {
    if (p->dataSuffixes().contains(suffix)) return true;
  }
  return false;
}

void MainWindow::openSession(const QString& path) {
  const auto session = widgets::read_session_file(path);
  for (auto it = session.tabs.begin(); it != session.tabs.end(); ++it) {
    auto* p = panel(it.key());
    if (!p) {
      throw DataError(("'" + path + "': unknown tab '" + it.key() + "'").toStdString());
    }
    try {
      p->restoreSection(it.value().toObject());
    } catch (const Error& e) {
      throw DataError(("'" + path + "': ").toStdString() + e.what());
    }
  }
  if (!session.current_tab.isEmpty()) showPanel(session.current_tab);
  m_session_path = path;
}

void MainWindow::openCheckpoint(const QString& path) {
  const auto meta = read_model_metadata(path.toStdString());
  for (auto* p : m_panels) {
    if (p->acceptsCheckpoint(meta)) {
      p->openCheckpoint(path);
      m_tabs->setCurrentWidget(p);
      return;
    }
  }
  throw CheckpointError(("no tab shows models with D_x = " + std::to_string(meta.model.dim_x) +
                         ", D_y = " + std::to_string(meta.model.dim_y) + " ('" +
                         path.toStdString() + "')"));
}

bool MainWindow::openFile(const QString& path) {
  try {
    const auto suffix = QFileInfo(path).suffix().toLower();
    bool handled = true;
    // TorchScript models are told by content, whatever their suffix (.pt, .pth, .ts, .jit).
    if (suffix == "pt" || (suffix != "json" && is_torchscript_model(path.toStdString()))) {
      openCheckpoint(path);
    } else if (suffix == "json") {
      openSession(path);
    } else {
      handled = false;
      for (auto* p : m_panels) {
        if (p->dataSuffixes().contains(suffix)) {
          p->openDataFile(path);
          m_tabs->setCurrentWidget(p);
          handled = true;
          break;
        }
      }
    }
    if (!handled) throw DataError(("no tab opens '." + suffix + "' files").toStdString());
    addRecentFile(QFileInfo(path).absoluteFilePath());
    return true;
  } catch (const Error& e) {
    showError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), QString::fromUtf8(e.what()));
    return false;
  }
}

void MainWindow::saveSessionTo(const QString& path) {
  widgets::SessionFile session;
  for (auto* p : m_panels) session.tabs[p->panelId()] = p->saveSection();
  if (auto* p = currentPanel()) session.current_tab = p->panelId();
  widgets::write_session_file(path, session);
  m_session_path = path;
}

void MainWindow::saveSession(bool choose_path) {
  QString path = m_session_path;
  if (choose_path || path.isEmpty()) {
    path = QFileDialog::getSaveFileName(this, tr("Save session"), "session.json",
                                        tr("Sessions (*.json)"));
    if (path.isEmpty()) return;
  }
  try {
    saveSessionTo(path);
    addRecentFile(QFileInfo(path).absoluteFilePath());
    statusBar()->showMessage(tr("Saved %1").arg(path), 3000);
  } catch (const Error& e) {
    showError(tr("Cannot save session"), QString::fromUtf8(e.what()));
  }
}

void MainWindow::exportPredictions() {
  auto* p = currentPanel();
  if (!p) return;
  if (p->predictionTable().columns.empty()) {
    showError(tr("Cannot export predictions"),
              tr("This tab has no predictions to export (yet): wait until the models have drawn."));
    return;
  }
  auto path = QFileDialog::getSaveFileName(this, tr("Export predictions"),
                                           "np-explorer-" + p->panelId() + "-predictions.csv",
                                           tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += ".csv";
  try {
    p->exportPredictions(path);
    statusBar()->showMessage(tr("Exported the predictions to %1").arg(path), 3000);
  } catch (const Error& e) {
    showError(tr("Cannot export predictions"), QString::fromUtf8(e.what()));
  }
}

void MainWindow::exportView() {
  auto* p = currentPanel();
  if (!p) return;
  QString filter;
  auto path =
      QFileDialog::getSaveFileName(this, tr("Export view"), "np-explorer-" + p->panelId() + ".png",
                                   tr("PNG image (*.png);;PDF (*.pdf);;SVG (*.svg)"), &filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) {
    path += filter.contains("pdf") ? ".pdf" : filter.contains("svg") ? ".svg" : ".png";
  }
  try {
    p->exportView(path);
    statusBar()->showMessage(tr("Exported %1").arg(path), 3000);
  } catch (const Error& e) {
    showError(tr("Cannot export"), QString::fromUtf8(e.what()));
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
  // A modal dialog in a run nobody watches waited forever (a corrupt checkpoint opened with
  // --screenshot under Xvfb).
  if (!widgets::dialogsAllowed()) {
    std::fprintf(stderr, "np-explorer: %s: %s\n", qPrintable(title), qPrintable(message));
    return;
  }
  QMessageBox::critical(this, title, message);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  for (const auto& url : event->mimeData()->urls()) {
    if (canOpen(url.toLocalFile())) {
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
  if (!restoreGeometry(settings.value("window/geometry").toByteArray())) {
    // First launch: 85 % of the screen, centred (the minimum size crams the legend onto the plot).
    if (const auto* screen = QGuiApplication::primaryScreen()) {
      const auto available = screen->availableGeometry();
      resize(available.size() * 0.85);
      move(available.center() - rect().center());
    }
  }
  restoreState(settings.value("window/state").toByteArray());
}

void MainWindow::saveSettings() const {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (m_training->hasActiveJobs()) {
    // Runs nobody watches have nobody to answer: they stop the jobs (checkpoints are kept).
    if (widgets::dialogsAllowed()) {
      const auto answer = QMessageBox::question(
          this, tr("Training is running"),
          tr("Stop the training jobs and quit?\n\nEach job writes a final checkpoint, which "
             "\"Open job…\" in the Training tab (or npe train --resume) continues later."),
          QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
      if (answer != QMessageBox::Yes) {
        event->ignore();
        return;
      }
    }
    m_training->stopAllAndWait();
  }
  saveSettings();
  event->accept();
}

}  // namespace npe::app
