#include "training/training_queue.h"

#include <filesystem>
#include <system_error>

#include <QDir>
#include <QFileInfo>
#include <QJsonObject>

#include <torch/cuda.h>

#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "npe/training/training_job.h"
#include "training/training_process.h"

namespace npe::widgets {
QString job_state_text(TrainingQueue::JobState state) {
  using JobState = TrainingQueue::JobState;
  switch (state) {
    case JobState::Queued:
      return QObject::tr("queued");
    case JobState::Running:
      return QObject::tr("running");
    case JobState::Paused:
      return QObject::tr("paused");
    case JobState::Finished:
      return QObject::tr("finished");
    case JobState::Stopped:
      return QObject::tr("stopped");
    case JobState::Failed:
      return QObject::tr("failed");
    case JobState::Disconnected:
      return QObject::tr("disconnected");
  }
  return {};
}

QString job_device(const QString& device) {
  if (device == "auto") return torch::cuda::is_available() ? "cuda" : "cpu";
  return device;
}

TrainingQueue::TrainingQueue(QObject* parent) : QObject(parent) {}

TrainingQueue::~TrainingQueue() = default;

QStringList TrainingQueue::add(const TrainingRequest& request, bool use_in_explorer) {
  for (const auto& job : m_jobs) {
    if (job->active() && QFileInfo(job->request.output_path).absoluteFilePath() ==
                             QFileInfo(request.output_path).absoluteFilePath()) {
      return {tr("Another job writes %1; choose another output file.").arg(request.output_path)};
    }
  }
  auto problems = validate_request(request);
  if (!problems.isEmpty()) return problems;
  if (request.host.kind == TrainingHost::Kind::ThisComputer && npe_executable().isEmpty()) {
    return {tr("Cannot find the npe program (set NPE_EXECUTABLE).")};
  }
  auto job = std::make_unique<Job>();
  job->request = request;
  job->task = request.task;
  job->model_name = request.label();
  job->total_steps = request.steps;
  job->use_in_explorer = use_in_explorer;
  const auto name = job->model_name;
  append(std::move(job));
  Q_EMIT statusMessage(tr("Queued %1").arg(name));
  scheduleJobs();
  return {};
}

void TrainingQueue::open(const QString& checkpoint_path) {
  const auto path = QFileInfo(checkpoint_path).absoluteFilePath();
  auto loaded = TrainingJob::resume(path.toStdString());
  auto job = std::make_unique<Job>();
  job->request.resume_path = path;
  job->request.output_path = path;
  job->request.device = "auto";
  job->request.steps = static_cast<int>(loaded->total_steps());
  job->task = QString::fromStdString(loaded->source().name());
  job->model_name = QString::fromStdString(model_info(loaded->spec().model.kind).display_name) +
                    " · " + job->task + " · " + QFileInfo(path).fileName();
  job->step = static_cast<int>(loaded->step());
  job->total_steps = static_cast<int>(loaded->total_steps());
  job->has_checkpoint = true;
  for (const auto& record : loaded->history()) {
    QJsonObject event;
    event["event"] = "validation";
    // Named: items() refers to the object, which a temporary would not outlive in the loop.
    const auto fields = record.to_json();
    for (const auto& [key, value] : fields.items()) {
      if (value.is_number()) event[QString::fromStdString(key)] = value.get<double>();
    }
    job->history.add(event);
    if (std::isfinite(record.loss)) {
      job->history.loss.push_back({double(record.step), record.wall_time_s, record.loss});
    }
    if (std::isfinite(record.validation_ll)) job->validation_ll = record.validation_ll;
  }
  job->state = job->step >= job->total_steps ? JobState::Finished : JobState::Stopped;
  job->log << tr("Opened %1 at step %2 of %3").arg(path).arg(job->step).arg(job->total_steps);
  append(std::move(job));
}

void TrainingQueue::append(std::unique_ptr<Job> job) {
  job->id = m_next_id++;
  m_jobs.push_back(std::move(job));
  Q_EMIT jobAdded(count() - 1);
}

TrainingQueue::Job* TrainingQueue::at(int index) {
  return index >= 0 && index < count() ? m_jobs[size_t(index)].get() : nullptr;
}

int TrainingQueue::indexOf(const Job& job) const {
  for (size_t i = 0; i < m_jobs.size(); ++i) {
    if (m_jobs[i].get() == &job) return static_cast<int>(i);
  }
  return -1;
}

void TrainingQueue::scheduleJobs() {
  for (auto& job : m_jobs) {
    if (job->state != JobState::Queued) continue;
    // One job per device of each host at a time.
    auto place = [](const Job& j) {
      const auto& host = j.request.host;
      return host.name + '\n' + (host.remote() ? j.request.device : job_device(j.request.device));
    };
    bool busy = false;
    for (const auto& other : m_jobs) {
      busy = busy || ((other->state == JobState::Running || other->state == JobState::Paused) &&
                      place(*other) == place(*job));
    }
    if (!busy) startJob(*job);
  }
}

TrainingRequest TrainingQueue::hostRequest(const Job& job) const {
  auto request = job.request;
  if (request.host.remote() && request.copy_data_to_host && !request.data_path.isEmpty()) {
    request.data_path = request.host.host_data_path(request.data_path);
  }
  return request;
}

void TrainingQueue::copyDataThenStart(Job& job, bool folder_made) {
  const auto& host = job.request.host;
  const auto command =
      folder_made ? host.copy_data(job.request.data_path) : host.make_data_folder();
  if (!folder_made) {
    appendLog(job, tr("Copying %1 to %2 on %3…")
                       .arg(job.request.data_path, host.host_data_path(job.request.data_path),
                            host.label()));
    setState(job, JobState::Running);
  }
  job.data_copy = std::make_unique<QProcess>();
  job.data_copy->setProcessChannelMode(QProcess::MergedChannels);
  const auto done = [this, &job, folder_made](bool ok) {
    const auto why = QString::fromUtf8(job.data_copy->readAll()).trimmed();
    const bool stopped = job.state == JobState::Stopped;
    job.data_copy.release()->deleteLater();
    if (stopped) {  // while copying
      scheduleJobs();
      return;
    }
    if (!ok) {
      onEnded(job, false, false,
              tr("Could not copy the data to %1: %2")
                  .arg(job.request.host.label(), why.isEmpty() ? tr("scp failed") : why));
      return;
    }
    if (!folder_made) {
      copyDataThenStart(job, true);
      return;
    }
    job.data_on_host = true;
    appendLog(job, tr("The data is on %1").arg(job.request.host.label()));
    startJob(job);
  };
  connect(job.data_copy.get(), &QProcess::finished, this,
          [done](int exit_code, QProcess::ExitStatus status) {
            done(exit_code == 0 && status == QProcess::NormalExit);
          });
  connect(job.data_copy.get(), &QProcess::errorOccurred, this,
          [done](QProcess::ProcessError error) {
            if (error == QProcess::FailedToStart) done(false);
          });
  job.data_copy->start(command.program, command.arguments);
}

void TrainingQueue::startJob(Job& job) {
  if (job.request.host.remote() && job.request.copy_data_to_host &&
      !job.request.data_path.isEmpty() && !job.data_on_host) {
    copyDataThenStart(job);
    return;
  }
  job.checkpoint_event_step = -1;
  job.process = std::make_unique<TrainingProcess>();
  connect(job.process.get(), &TrainingProcess::event, this,
          [this, &job](const QJsonObject& e) { onEvent(job, e); });
  connect(job.process.get(), &TrainingProcess::logLine, this,
          [this, &job](const QString& line) { appendLog(job, line); });
  connect(job.process.get(), &TrainingProcess::ended, this,
          [this, &job](bool completed, bool stopped, const QString& failure) {
            onEnded(job, completed, stopped, failure);
          });
  const auto request = hostRequest(job);
  const auto command = request.host.npe_command(request.arguments());
  if (request.host.remote()) {
    appendLog(job, tr("On %1: $ %2").arg(request.host.label(), command.arguments.join(' ')));
  } else {
    appendLog(job, "$ npe " + request.arguments().join(' '));
  }
  const auto recipe = request.recipeLine();
  if (!recipe.isEmpty()) appendLog(job, tr("Recipe: %1").arg(QString::fromUtf8(recipe.trimmed())));
  setState(job, JobState::Running);
  job.process->start(command.program, command.arguments, recipe);
}

void TrainingQueue::onEvent(Job& job, const QJsonObject& event) {
  const auto kind = event.value("event").toString();
  job.history.add(event);
  if (kind == "start") {
    job.step = event.value("step").toInt();
    job.total_steps = event.value("total_steps").toInt();
    job.task = event.value("task").toString();
    // The precision, when npe reports it: a resumed job continues in its run's own.
    auto compute = event.value("device").toString();
    if (event.contains("precision")) compute += ", " + event.value("precision").toString();
    appendLog(job, tr("Started %1 on %2 (%3 parameters, %4), step %5 of %6")
                       .arg(event.value("model_name").toString(), job.task)
                       .arg(event.value("parameters").toInteger())
                       .arg(compute)
                       .arg(job.step)
                       .arg(job.total_steps));
  } else if (kind == "progress") {
    job.step = event.value("step").toInt();
    job.steps_per_s = event.value("steps_per_s").toDouble();
    job.eta_s = event.value("eta_s").isDouble() ? event.value("eta_s").toDouble() : NAN;
  } else if (kind == "validation") {
    if (event.value("val_ll").isDouble()) job.validation_ll = event.value("val_ll").toDouble();
  } else if (kind == "checkpoint") {
    // Progress events are throttled: the checkpoint's step is the latest one.
    job.step = std::max(job.step, event.value("step").toInt());
    appendLog(job, tr("Checkpoint at step %1: %2")
                       .arg(event.value("step").toInt())
                       .arg(event.value("path").toString()));
    onCheckpoint(job, event.value("step").toInt());
  } else if (kind == "finished") {
    // A stop saves its checkpoint after the last progress report: this is the step it holds.
    // That final checkpoint has no event of its own (the one before it may be many steps
    // earlier): on a host it must be copied back now, or Resume here would lose those steps.
    job.step = event.value("step").toInt(job.step);
    if (event.contains("checkpoint") && job.step != job.checkpoint_event_step) {
      onCheckpoint(job, job.step);
    }
  } else if (kind == "paused") {
    setState(job, JobState::Paused);
  } else if (kind == "resumed") {
    setState(job, JobState::Running);
  } else if (kind == "error") {
    appendLog(job, tr("Error: %1").arg(event.value("message").toString()));
  }
  Q_EMIT jobChanged(indexOf(job));
}

void TrainingQueue::onCheckpoint(Job& job, int step) {
  job.checkpoint_event_step = step;
  if (job.request.host.remote()) {
    copyBack(job, step);
  } else {
    job.has_checkpoint = true;
    checkpointArrived(job);
  }
}

void TrainingQueue::checkpointArrived(Job& job) {
  if (job.use_in_explorer) Q_EMIT checkpointForExplorer(job.request.output_path);
}

void TrainingQueue::copyBack(Job& job, int step) {
  if (job.copy) {  // one copy at a time; the newest checkpoint follows the one under way
    job.copy_pending_step = step;
    return;
  }
  // Into a folder beside the output, then renamed over it: the output path always holds a
  // whole checkpoint (the previous one until the new one has fully arrived).
  const QFileInfo output(job.request.output_path);
  const auto incoming = output.absolutePath() + "/.npe-incoming-" + output.fileName();
  QDir().mkpath(incoming);
  const auto& host = job.request.host;
  const auto command = host.copy_back(host.host_path(job.request.output_path), incoming);
  job.copy = std::make_unique<QProcess>();
  job.copy->setProcessChannelMode(QProcess::MergedChannels);
  connect(job.copy.get(), &QProcess::finished, this,
          [this, &job, step, incoming](int exit_code, QProcess::ExitStatus status) {
            onCopied(job, step, exit_code == 0 && status == QProcess::NormalExit, incoming);
          });
  connect(job.copy.get(), &QProcess::errorOccurred, this,
          [this, &job, step, incoming](QProcess::ProcessError error) {
            if (error == QProcess::FailedToStart) onCopied(job, step, false, incoming);
          });
  job.copy->start(command.program, command.arguments);
}

void TrainingQueue::onCopied(Job& job, int step, bool ok, const QString& incoming) {
  const auto output = QFileInfo(job.request.output_path).absoluteFilePath();
  const auto name = QFileInfo(output).fileName();
  std::error_code error;
  if (ok) {
    // The metadata first, then the checkpoint it describes; each rename replaces atomically.
    for (const auto& suffix : {QStringLiteral(".json"), QString()}) {
      std::filesystem::rename((incoming + '/' + name + suffix).toStdString(),
                              (output + suffix).toStdString(), error);
      if (error) break;
    }
  }
  if (ok && !error) {
    // The host may have written a newer checkpoint since the event that asked for this copy:
    // the step is the one the copied file holds.
    try {
      step = static_cast<int>(read_checkpoint_metadata(output.toStdString()).steps);
    } catch (const Error&) {
    }
    job.copied_step = step;
    job.has_checkpoint = true;
    appendLog(job, tr("Copied the checkpoint at step %1 to %2").arg(step).arg(output));
    Q_EMIT checkpointCopied(indexOf(job), step);
    checkpointArrived(job);
  } else {
    const auto why =
        error ? QString::fromStdString(error.message())
              : QString::fromUtf8(job.copy ? job.copy->readAll() : QByteArray()).trimmed();
    appendLog(job, tr("Could not copy the checkpoint at step %1 from %2: %3 (the one here is "
                      "kept)")
                       .arg(step)
                       .arg(job.request.host.label(), why.isEmpty() ? tr("scp failed") : why));
  }
  if (job.copy) job.copy.release()->deleteLater();
  if (job.copy_pending_step > 0) {
    const int next = job.copy_pending_step;
    job.copy_pending_step = 0;
    copyBack(job, next);
  }
  Q_EMIT jobChanged(indexOf(job));
}

void TrainingQueue::onEnded(Job& job, bool completed, bool stopped, const QString& failure) {
  if (job.request.host.remote() && !completed && !stopped && job.process) {
    // ssh's own message (exit status 255: connection refused or lost, authentication, host key)
    // or the host shell's (127: no npe there) says more than a status.
    const auto said = job.process->lastLogLine();
    if (job.process->started()) {
      appendLog(job, tr("The connection to %1 was lost at step %2 (%3). npe there stops after "
                        "a final checkpoint; the copy here is at step %4. Resume continues it "
                        "on the host.")
                         .arg(job.request.host.label())
                         .arg(job.step)
                         .arg(said.isEmpty() ? failure : said)
                         .arg(job.copied_step));
      job.request.resume_path = job.request.output_path;
      setState(job, JobState::Disconnected);
      Q_EMIT statusMessage(tr("%1: disconnected").arg(job.model_name));
      job.process.release()->deleteLater();
      scheduleJobs();
      return;
    }
    appendLog(job, tr("Could not start the job on %1: %2")
                       .arg(job.request.host.label(), said.isEmpty() ? failure : said));
  }
  if (!failure.isEmpty()) appendLog(job, tr("Failed: %1").arg(failure));
  if (stopped) {
    appendLog(job, tr("Stopped at step %1; the checkpoint %2 is kept (Resume continues it)")
                       .arg(job.step)
                       .arg(job.request.output_path));
  }
  if (completed) appendLog(job, tr("Finished: %1 steps").arg(job.step));
  // Further runs of this job continue its checkpoint.
  const bool on_host = job.request.host.remote() && job.process && job.process->started();
  if (job.has_checkpoint || on_host || QFileInfo::exists(job.request.output_path)) {
    job.request.resume_path = job.request.output_path;
  }
  setState(job, completed ? JobState::Finished : stopped ? JobState::Stopped : JobState::Failed);
  Q_EMIT statusMessage(tr("%1: %2").arg(job.model_name, job_state_text(job.state)));
  // Deleting the process inside its own signal is unsafe: later.
  if (job.process) job.process.release()->deleteLater();
  scheduleJobs();
}

void TrainingQueue::setState(Job& job, JobState state) {
  job.state = state;
  const int index = indexOf(job);
  Q_EMIT jobChanged(index);
  Q_EMIT jobStateChanged(index, state);
}

void TrainingQueue::appendLog(Job& job, const QString& line) {
  job.log << line;
  Q_EMIT logAppended(indexOf(job), line);
}

void TrainingQueue::pause(int index) {
  auto* job = at(index);
  if (job && job->state == JobState::Running && job->process) job->process->pause();
}

void TrainingQueue::resume(int index) {
  auto* job = at(index);
  if (!job) return;
  if (job->state == JobState::Paused && job->process) {
    job->process->resume();
  } else if (job->state == JobState::Stopped || job->state == JobState::Failed ||
             job->state == JobState::Disconnected) {
    // A new process continues the checkpoint (npe train --resume).
    job->request.resume_path = job->request.output_path;
    job->request.steps = std::max(job->total_steps, job->step);
    setState(*job, JobState::Queued);
    scheduleJobs();
  }
}

void TrainingQueue::stop(int index) {
  auto* job = at(index);
  if (!job) return;
  if (job->state == JobState::Queued) {
    setState(*job, JobState::Stopped);
  } else if (job->data_copy) {
    appendLog(*job, tr("Stopped while the data was copied"));
    setState(*job, JobState::Stopped);
    job->data_copy->kill();
  } else if (job->process) {
    appendLog(*job, tr("Stopping after a final checkpoint…"));
    job->process->stop();
  }
}

void TrainingQueue::useInExplorer(int index) {
  auto* job = at(index);
  if (!job) return;
  job->use_in_explorer = true;
  if (job->has_checkpoint) {
    Q_EMIT checkpointForExplorer(job->request.output_path);
  } else {
    Q_EMIT statusMessage(
        tr("%1 appears in the explorer at its first checkpoint").arg(job->model_name));
  }
  Q_EMIT jobChanged(index);
}

bool TrainingQueue::hasActiveJobs() const {
  for (const auto& job : m_jobs) {
    if (job->state == JobState::Running || job->state == JobState::Paused) return true;
  }
  return false;
}

void TrainingQueue::stopAllAndWait() {
  for (auto& job : m_jobs) {
    if (job->state == JobState::Queued) job->state = JobState::Stopped;
  }
  for (auto& job : m_jobs) {
    if (job->data_copy) {
      job->state = JobState::Stopped;
      job->data_copy->kill();
      job->data_copy->waitForFinished(5000);
    }
    if (job->process && job->process->isRunning()) job->process->stopAndWait();
  }
}

}  // namespace npe::widgets
