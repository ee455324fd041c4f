#pragma once
// What the training form shows under "Data" before a job starts: what the reader found in the
// user's file or folder (series and rows, the x spacing and unit, the split sizes, the window;
// or the pictures, their size and colour) and one example task drawn in the data's units, or
// the reader's error in words. The file is read on a
// worker thread, so a large file never stalls the form.

#include <memory>
#include <thread>

#include <QString>
#include <QWidget>
#include <nlohmann/json.hpp>

class QCustomPlot;
class QLabel;

namespace npe {
class PictureTaskSource;
class SeriesTaskSource;
class TaskSource;
}  // namespace npe

namespace npe::widgets {

class TaskDataPreview final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TaskDataPreview)

 public:
  explicit TaskDataPreview(QWidget* parent = nullptr);
  /// Waits for a reading in progress (a file is read in about a second at most).
  ~TaskDataPreview() override;

  /// Reads `task` with `options` (its "data" among them) and shows what it found. A newer call
  /// supersedes a reading still in progress.
  void showTask(const QString& task, const nlohmann::json& options);
  /// The task source of the last reading that succeeded for the current settings, or null.
  std::shared_ptr<const TaskSource> source() const { return m_source; }
  bool busy() const { return m_busy; }
  QString summary() const;
  QCustomPlot* examplePlot() const { return m_plot; }
  /// An example picture task (the pictures family), hidden otherwise.
  QLabel* examplePicture() const { return m_picture; }

 Q_SIGNALS:
  /// A reading finished: ok, or the message shown.
  void shown(bool ok, const QString& message);

 private:
  struct Reading;
  void start();
  void finish(const std::shared_ptr<Reading>& reading);
  void drawExample(const SeriesTaskSource& series);
  void drawExample(const PictureTaskSource& pictures);

  QLabel* m_summary = nullptr;
  QCustomPlot* m_plot = nullptr;
  QLabel* m_picture = nullptr;
  std::shared_ptr<const TaskSource> m_source;
  QString m_task;
  nlohmann::json m_options;
  bool m_busy = false;
  bool m_pending = false;  // settings changed while a reading ran: read again after it
  std::thread m_worker;
};

}  // namespace npe::widgets
