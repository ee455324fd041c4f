#pragma once
// The np-explorer main window: assembles the explorer tabs, menus, files and status bar. Every
// tab is an ExplorerPanel; the window knows nothing else about them.

#include <vector>

#include <torch/types.h>

#include <QHash>
#include <QMainWindow>
#include <QString>

class QLabel;
class QMenu;
class QTabWidget;
class QUndoGroup;

namespace npe::widgets {
class ExplorerPanel;
class FunctionExplorer;
class ImageExplorer;
class MapExplorer;
class TrainingTab;
}  // namespace npe::widgets

namespace npe::app {

class HelpBrowser;

class MainWindow final : public QMainWindow {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MainWindow)

 public:
  /// Neural models run on `device`.
  explicit MainWindow(torch::Device device, QWidget* parent = nullptr);

  widgets::FunctionExplorer* functionExplorer() const { return m_functions; }
  widgets::ImageExplorer* imageExplorer() const { return m_images; }
  widgets::MapExplorer* mapExplorer() const { return m_maps; }
  widgets::TrainingTab* trainingTab() const { return m_training; }
  const std::vector<widgets::ExplorerPanel*>& panels() const { return m_panels; }
  widgets::ExplorerPanel* currentPanel() const;
  /// The panel with this id ("functions", "images"), or nullptr.
  widgets::ExplorerPanel* panel(const QString& id) const;
  /// Shows the explorer panel with this id, or the training tab for "training"; false when
  /// there is none.
  bool showPanel(const QString& id);
  /// Ids showPanel() accepts.
  QStringList tabIds() const;
  /// Opens (or refreshes) a checkpoint in the explorer tab that shows its kind of model without
  /// switching tabs: the training tab's "Use in explorer".
  void showTrainingCheckpoint(const QString& path);

  /// Opens a session (.json), a checkpoint (.pt, in the tab of its task) or a data file a tab
  /// understands (pictures); errors are shown in a dialog and leave the state unchanged.
  /// Returns whether it succeeded.
  bool openFile(const QString& path);
  /// Saves every tab's section. Throws npe::Error.
  void saveSessionTo(const QString& path);
  /// The status bar's message: always the latest one of the tab in front.
  QString statusText() const;
  /// Opens the help window on the tab in front's short page (its "?", F1).
  void showTabHelp();
  /// Opens the help window on the user guide.
  void showUserGuide();
  /// The help window, once opened (nullptr before).
  HelpBrowser* helpBrowser() const { return m_help; }

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void addPanel(widgets::ExplorerPanel* panel);
  /// Remembers `tab`'s latest message and shows it if the tab is in front.
  void setTabMessage(QWidget* tab, const QString& text);
  /// Makes the tab at `index` the active one (predictions, undo); the others wait behind it.
  void bringToFront(int index);
  void buildMenus();
  void openSession(const QString& path);
  void openCheckpoint(const QString& path);
  bool canOpen(const QString& path) const;
  void saveSession(bool choose_path);
  void exportView();
  /// File → Export Predictions: the tab's last predictions as CSV (ExplorerPanel::predictionTable).
  void exportPredictions();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void showError(const QString& title, const QString& message);
  void loadSettings();
  void saveSettings() const;

  QTabWidget* m_tabs = nullptr;
  std::vector<widgets::ExplorerPanel*> m_panels;
  widgets::FunctionExplorer* m_functions = nullptr;
  widgets::ImageExplorer* m_images = nullptr;
  widgets::MapExplorer* m_maps = nullptr;
  widgets::TrainingTab* m_training = nullptr;
  QUndoGroup* m_undo_group = nullptr;
  QLabel* m_status = nullptr;
  QHash<const QWidget*, QString> m_tab_messages;
  QMenu* m_recent_menu = nullptr;
  QString m_session_path;
  HelpBrowser* m_help = nullptr;
};

}  // namespace npe::app
