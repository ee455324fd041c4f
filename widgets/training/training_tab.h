#pragma once
// The training tab: a form for new jobs, a queue that runs one job per device at a time, live
// curves, progress and log of the selected job, and "Use in explorer", which shows the model
// being trained in the explorer tab for its task, refreshed at every checkpoint. Each job is an
// `npe train --progress-json` child process (TrainingProcess).

#include <map>
#include <memory>
#include <vector>

#include <QWidget>

#include "training/training_curves.h"
#include "training/training_request.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTreeWidget;
class QTreeWidgetItem;

namespace npe {
class TaskSource;
}

namespace npe::widgets {

class TrainingProcess;

class TrainingTab final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TrainingTab)

 public:
  enum class JobState { Queued, Running, Paused, Finished, Stopped, Failed };

  explicit TrainingTab(QWidget* parent = nullptr);
  ~TrainingTab() override;

  /// The form's current values, and setting them (tests, restoring the last form).
  TrainingRequest formRequest() const;
  void setFormRequest(const TrainingRequest& request);
  /// What "Start" does: checks the form and queues a job (it starts when its device is free).
  /// Returns the problems shown in the form (empty when the job was queued).
  QStringList submit();
  /// Adds the job of a checkpoint npe train wrote (its curves from the stored history), stopped
  /// or finished; "Resume" continues it. Throws npe::CheckpointError.
  void openJob(const QString& checkpoint_path);

  int jobCount() const { return static_cast<int>(m_jobs.size()); }
  JobState jobState(int index) const;
  int jobStep(int index) const;
  const TrainingHistory& jobHistory(int index) const;
  QString jobCheckpoint(int index) const;
  void selectJob(int index);
  int selectedJob() const;
  void pauseJob(int index);
  void resumeJob(int index);
  void stopJob(int index);
  /// Shows the job's model in the explorer tab of its task now (if it has a checkpoint) and
  /// after every checkpoint it writes.
  void useInExplorer(int index);
  bool hasActiveJobs() const;
  /// Stops every running job and waits for its final checkpoint (for quitting).
  void stopAllAndWait();
  TrainingCurves* curves() const { return m_curves; }
  QLabel* formMessage() const { return m_message; }

 Q_SIGNALS:
  /// A job marked "Use in explorer" has a (new) checkpoint: open or refresh it in the
  /// explorer tab that shows models of its kind.
  void checkpointForExplorer(const QString& path);
  void statusMessage(const QString& message);
  /// Any job changed state (tests wait on it).
  void jobStateChanged(int index, npe::widgets::TrainingTab::JobState state);

 private:
  struct Job;
  QWidget* buildForm();
  QWidget* buildJobView();
  void refreshModels();
  void updateSizeFields();
  QString defaultOutputPath() const;
  void startJob(Job& job);
  void scheduleJobs();
  void onEvent(Job& job, const QJsonObject& event);
  void onEnded(Job& job, bool completed, bool stopped, const QString& failure);
  void setState(Job& job, JobState state);
  void updateJobRow(Job& job);
  void updateJobView();
  void appendLog(Job& job, const QString& line);
  int indexOf(const Job& job) const;
  Job* selected() const;
  const TaskSource* taskSource(const QString& name, QString* problem = nullptr);
  QString shiftLabel(const QString& task);

  // Form.
  QComboBox* m_task = nullptr;
  QComboBox* m_model = nullptr;
  QComboBox* m_size = nullptr;
  QSpinBox* m_dim_model = nullptr;
  QSpinBox* m_layers = nullptr;
  QSpinBox* m_heads = nullptr;
  QSpinBox* m_pseudo_tokens = nullptr;
  QSpinBox* m_steps = nullptr;
  QSpinBox* m_batch = nullptr;
  QDoubleSpinBox* m_learning_rate = nullptr;
  QSpinBox* m_seed = nullptr;
  QComboBox* m_device = nullptr;
  QLineEdit* m_output = nullptr;
  QSpinBox* m_checkpoint_every = nullptr;
  QSpinBox* m_validation_every = nullptr;
  QCheckBox* m_use_when_started = nullptr;
  QLabel* m_message = nullptr;
  QFormLayout* m_form = nullptr;
  QString m_last_default_output;
  // Jobs.
  QTreeWidget* m_queue = nullptr;
  QPushButton* m_pause = nullptr;
  QPushButton* m_resume = nullptr;
  QPushButton* m_stop = nullptr;
  QPushButton* m_use = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_rate = nullptr;
  QComboBox* m_axis = nullptr;
  TrainingCurves* m_curves = nullptr;
  QPlainTextEdit* m_log = nullptr;
  std::vector<std::unique_ptr<Job>> m_jobs;
  std::map<QString, std::shared_ptr<const TaskSource>> m_sources;
  std::map<QString, QString> m_source_problems;
  int m_next_id = 1;
};

}  // namespace npe::widgets
