#pragma once
// The training jobs, without a view: a queue that runs one job per device at a time, each an
// `npe train --progress-json` child process (TrainingProcess), and what is known of each job
// (state, step, curves, log). The training tab shows it; tests drive it directly.

#include <cmath>
#include <memory>
#include <vector>

#include <QObject>
#include <QProcess>
#include <QStringList>

#include "training/training_curves.h"
#include "training/training_request.h"

namespace npe::widgets {

class TrainingProcess;

class TrainingQueue final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TrainingQueue)

 public:
  /// Disconnected: the connection to the job's SSH host was lost while it ran (npe there stops
  /// after a final checkpoint); Resume continues it on the host.
  enum class JobState { Queued, Running, Paused, Finished, Stopped, Failed, Disconnected };

  struct Job {
    int id = 0;
    TrainingRequest request;
    JobState state = JobState::Queued;
    TrainingHistory history;
    QStringList log;
    QString task;
    QString model_name;
    int step = 0;
    int total_steps = 0;
    double steps_per_s = 0.0;
    double eta_s = NAN;
    double validation_ll = NAN;
    bool has_checkpoint = false;
    /// SSH hosts: the step of the last checkpoint copied back here (0: none yet).
    int copied_step = 0;
    std::unique_ptr<QProcess> copy;  // the scp copying a checkpoint back, while it runs
    int copy_pending_step = 0;       // a newer checkpoint to copy once it has finished
    int checkpoint_event_step = -1;  // the step of the last checkpoint npe reported
    /// Show the model in the explorer tab of its task at every checkpoint.
    bool use_in_explorer = false;
    std::unique_ptr<TrainingProcess> process;
    /// SSH hosts with copy_data_to_host: the ssh or scp putting the data there, while it runs,
    /// and whether it is there (a resumed job does not copy it again).
    std::unique_ptr<QProcess> data_copy;
    bool data_on_host = false;

    bool active() const {
      return state == JobState::Queued || state == JobState::Running || state == JobState::Paused;
    }
  };

  explicit TrainingQueue(QObject* parent = nullptr);
  ~TrainingQueue() override;

  /// Queues a job (it starts when its device is free). Returns why it cannot be queued (the
  /// request's problems, an output file another active job writes, no npe program), or nothing.
  QStringList add(const TrainingRequest& request, bool use_in_explorer);
  /// Adds the job of a checkpoint npe train wrote (its curves from the stored history), stopped
  /// or finished; resume() continues it. Throws npe::CheckpointError.
  void open(const QString& checkpoint_path);

  int count() const { return static_cast<int>(m_jobs.size()); }
  /// The index-th job, in the order added. Throws std::out_of_range.
  const Job& job(int index) const { return *m_jobs.at(static_cast<size_t>(index)); }

  void pause(int index);
  /// Continues a paused job, or queues a stopped or failed one again from its checkpoint.
  void resume(int index);
  /// Stops a job after a final checkpoint (a queued one at once).
  void stop(int index);
  /// Shows the job's model in the explorer now (if it has a checkpoint) and after every
  /// checkpoint it writes.
  void useInExplorer(int index);
  bool hasActiveJobs() const;
  /// Stops every running job and waits for its final checkpoint (for quitting).
  void stopAllAndWait();

 Q_SIGNALS:
  void jobAdded(int index);
  /// Anything shown of a job changed (step, rates, validation, state, flags).
  void jobChanged(int index);
  void logAppended(int index, const QString& line);
  void jobStateChanged(int index, npe::widgets::TrainingQueue::JobState state);
  /// A job marked "use in explorer" has a (new) checkpoint.
  void checkpointForExplorer(const QString& path);
  /// A job on an SSH host has a checkpoint copied back to its output path, at `step`.
  void checkpointCopied(int index, int step);
  void statusMessage(const QString& message);

 private:
  Job* at(int index);
  int indexOf(const Job& job) const;
  void append(std::unique_ptr<Job> job);
  void scheduleJobs();
  void startJob(Job& job);
  /// Copies a job's data to its SSH host (mkdir, then scp), then starts it; a failed copy fails
  /// the job with scp's words.
  void copyDataThenStart(Job& job, bool folder_made = false);
  /// The request as the host runs it: with the host's copy of the data where it is copied.
  TrainingRequest hostRequest(const Job& job) const;
  void onEvent(Job& job, const QJsonObject& event);
  void onEnded(Job& job, bool completed, bool stopped, const QString& failure);
  void setState(Job& job, JobState state);
  void appendLog(Job& job, const QString& line);
  void copyBack(Job& job, int step);
  void onCopied(Job& job, int step, bool ok, const QString& incoming);
  /// npe wrote a checkpoint at `step`: copied back from a host, else shown where asked.
  void onCheckpoint(Job& job, int step);
  void checkpointArrived(Job& job);

  std::vector<std::unique_ptr<Job>> m_jobs;
  int m_next_id = 1;
};

/// "queued", "running", ... for the job list and status messages.
QString job_state_text(TrainingQueue::JobState state);
/// The device a job runs on, "auto" resolved: CUDA when this libtorch sees a GPU (on an SSH
/// host "auto" stays: the host resolves it). Jobs queue per host and resolved device.
QString job_device(const QString& device);

}  // namespace npe::widgets
