#pragma once
// One `npe train --progress-json` child process: started with a request's arguments, its JSON
// lines turned into signals, and pause / resume / stop sent on its stdin. Training runs in that
// process, so it never blocks the GUI thread and a crash in it cannot take the GUI down.

#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTimer>

namespace npe::widgets {

class TrainingProcess final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TrainingProcess)

 public:
  explicit TrainingProcess(QObject* parent = nullptr);
  ~TrainingProcess() override;

  /// Starts `program arguments`, `first_input` its first standard input (the recipe of
  /// `npe train --spec -`). Errors (program missing) arrive as failed().
  void start(const QString& program, const QStringList& arguments,
             const QByteArray& first_input = {});
  bool isRunning() const;
  /// The running process's id (0 when none): for tests that kill it as a crash would.
  qint64 processId() const { return m_process.processId(); }
  /// Whether the job said it started (its "start" event): a connection lost before that is a
  /// failure to connect, after it a disconnection.
  bool started() const { return m_started_event; }
  /// The last line of its log (ssh's own message when the connection failed).
  QString lastLogLine() const { return m_last_log_line; }
  void pause();
  void resume();
  /// Asks the job to stop after a final checkpoint; kills it if it has not ended within
  /// `grace_ms` (the last periodic checkpoint is kept either way).
  void stop(int grace_ms = 15000);
  /// Stops and waits (at most `grace_ms`) for the process to end: for quitting.
  void stopAndWait(int grace_ms = 15000);

 Q_SIGNALS:
  /// Every event line: "start", "progress", "validation", "checkpoint", "paused", "resumed",
  /// "finished", "error" (see npe train --progress-json).
  void event(const QJsonObject& event);
  /// A line of the job's stderr (its log: set-up, warnings, error messages).
  void logLine(const QString& line);
  /// The process ended: `stopped` when asked to, `failure` non-empty when it failed.
  void ended(bool completed, bool stopped, const QString& failure);

 private:
  void readEvents();
  void readLog();
  void onFinished(int exit_code, QProcess::ExitStatus status);

  QProcess m_process;
  QTimer m_kill_timer;
  QByteArray m_stdout_buffer;
  QString m_last_error;
  bool m_stop_requested = false;
  bool m_finished_event = false;
  bool m_started_event = false;
  QString m_last_log_line;
  bool m_stopped_event = false;
};

}  // namespace npe::widgets
