#pragma once
// The np-explorer main window: assembles the explorer tabs, menus, files and status bar.

#include <torch/types.h>

#include <QMainWindow>
#include <QString>

class QLabel;
class QMenu;

namespace npe::widgets {
class FunctionExplorer;
}

namespace npe::app {

class MainWindow final : public QMainWindow {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MainWindow)

 public:
  /// Neural models run on `device`.
  explicit MainWindow(torch::Device device, QWidget* parent = nullptr);

  widgets::FunctionExplorer* functionExplorer() const { return m_explorer; }
  /// Opens a session (.json) or checkpoint (.pt); errors are shown in a dialog and leave the
  /// current state unchanged. Returns whether it succeeded.
  bool openFile(const QString& path);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void saveSession(bool choose_path);
  void exportPlot();
  void addRecentFile(const QString& path);
  void rebuildRecentMenu();
  void showError(const QString& title, const QString& message);
  void loadSettings();
  void saveSettings() const;

  widgets::FunctionExplorer* m_explorer = nullptr;
  QLabel* m_status = nullptr;
  QMenu* m_recent_menu = nullptr;
  QString m_session_path;
};

}  // namespace npe::app
