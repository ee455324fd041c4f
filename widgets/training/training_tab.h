#pragma once
// The training tab: the form for new jobs (TrainingForm), the job queue (TrainingQueue: one job
// per device at a time, each an `npe train --progress-json` child process) and the view of the
// jobs: their list, live curves, progress and log of the selected one, and "Use in explorer",
// which shows the model being trained in the explorer tab for its task, refreshed at every
// checkpoint.

#include <QWidget>

#include "training/training_curves.h"
#include "training/training_queue.h"
#include "training/training_request.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTreeWidget;

namespace npe::widgets {

class TrainingForm;

class TrainingTab final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TrainingTab)

 public:
  using JobState = TrainingQueue::JobState;

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
  /// The form trains on the user's file (TrainingForm::useOwnData).
  void useOwnData(const QString& path);

  TrainingQueue* queue() const { return m_jobs; }
  int jobCount() const { return m_jobs->count(); }
  JobState jobState(int index) const { return m_jobs->job(index).state; }
  int jobStep(int index) const { return m_jobs->job(index).step; }
  const TrainingHistory& jobHistory(int index) const { return m_jobs->job(index).history; }
  QString jobCheckpoint(int index) const { return m_jobs->job(index).request.output_path; }
  void selectJob(int index);
  int selectedJob() const;
  void pauseJob(int index) { m_jobs->pause(index); }
  void resumeJob(int index) { m_jobs->resume(index); }
  void stopJob(int index) { m_jobs->stop(index); }
  /// Shows the job's model in the explorer tab of its task now (if it has a checkpoint) and
  /// after every checkpoint it writes.
  void useInExplorer(int index) { m_jobs->useInExplorer(index); }
  bool hasActiveJobs() const { return m_jobs->hasActiveJobs(); }
  /// Stops every running job and waits for its final checkpoint (for quitting).
  void stopAllAndWait() { m_jobs->stopAllAndWait(); }
  TrainingCurves* curves() const { return m_curves; }
  QLabel* formMessage() const;

 Q_SIGNALS:
  /// A job marked "Use in explorer" has a (new) checkpoint: open or refresh it in the
  /// explorer tab that shows models of its kind.
  void checkpointForExplorer(const QString& path);
  void statusMessage(const QString& message);
  /// Any job changed state (tests wait on it).
  void jobStateChanged(int index, npe::widgets::TrainingQueue::JobState state);

 private:
  QWidget* buildJobView();
  void addJobRow(int index);
  void updateJobRow(int index);
  void updateJobView();

  TrainingForm* m_form = nullptr;
  TrainingQueue* m_jobs = nullptr;
  QTreeWidget* m_list = nullptr;
  QPushButton* m_pause = nullptr;
  QPushButton* m_resume = nullptr;
  QPushButton* m_stop = nullptr;
  QPushButton* m_use = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_rate = nullptr;
  QComboBox* m_axis = nullptr;
  TrainingCurves* m_curves = nullptr;
  QPlainTextEdit* m_log = nullptr;
};

}  // namespace npe::widgets
