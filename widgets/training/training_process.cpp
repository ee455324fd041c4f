#include "training/training_process.h"

#include <QJsonDocument>

namespace npe::widgets {

TrainingProcess::TrainingProcess(QObject* parent) : QObject(parent) {
  m_kill_timer.setSingleShot(true);
  connect(&m_kill_timer, &QTimer::timeout, this, [this] {
    if (isRunning()) m_process.kill();
  });
  connect(&m_process, &QProcess::readyReadStandardOutput, this, &TrainingProcess::readEvents);
  connect(&m_process, &QProcess::readyReadStandardError, this, &TrainingProcess::readLog);
  connect(&m_process, &QProcess::finished, this, &TrainingProcess::onFinished);
  connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) {
      Q_EMIT ended(false, false,
                   tr("cannot start %1: %2").arg(m_process.program(), m_process.errorString()));
    }
  });
}

TrainingProcess::~TrainingProcess() {
  // Whoever listens may be half destroyed already (the tab owns its processes through its
  // jobs): nothing is reported from here. Killing the process makes QProcess emit finished(),
  // which ran onFinished() and emitted ended() into the tab in the middle of its destruction
  // (heap corruption when a test failed with a job still running).
  blockSignals(true);
  m_process.disconnect(this);
  if (isRunning()) {
    m_process.kill();
    m_process.waitForFinished(3000);
  }
}

void TrainingProcess::start(const QString& program, const QStringList& arguments,
                            const QByteArray& first_input) {
  m_stdout_buffer.clear();
  m_last_error.clear();
  m_stop_requested = m_finished_event = m_stopped_event = m_started_event = false;
  m_last_log_line.clear();
  m_process.start(program, arguments);
  // Buffered by QProcess until the child's standard input is open; ahead of any command.
  if (!first_input.isEmpty()) m_process.write(first_input);
}

bool TrainingProcess::isRunning() const {
  return m_process.state() != QProcess::NotRunning;
}

void TrainingProcess::pause() {
  if (isRunning()) m_process.write("pause\n");
}

void TrainingProcess::resume() {
  if (isRunning()) m_process.write("resume\n");
}

void TrainingProcess::stop(int grace_ms) {
  if (!isRunning()) return;
  m_stop_requested = true;
  m_process.write("stop\n");
  m_kill_timer.start(grace_ms);
}

void TrainingProcess::stopAndWait(int grace_ms) {
  if (!isRunning()) return;
  stop(grace_ms);
  if (!m_process.waitForFinished(grace_ms)) {
    m_process.kill();
    m_process.waitForFinished(3000);
  }
}

void TrainingProcess::readEvents() {
  m_stdout_buffer += m_process.readAllStandardOutput();
  for (qsizetype end = m_stdout_buffer.indexOf('\n'); end >= 0;
       end = m_stdout_buffer.indexOf('\n')) {
    const auto line = m_stdout_buffer.left(end);
    m_stdout_buffer.remove(0, end + 1);
    QJsonParseError error{};
    const auto document = QJsonDocument::fromJson(line, &error);
    if (!document.isObject()) {
      Q_EMIT logLine(QString::fromUtf8(line));  // not an event: show it as it is
      continue;
    }
    const auto object = document.object();
    const auto kind = object.value("event").toString();
    if (kind == "start") {
      m_started_event = true;
    } else if (kind == "finished") {
      m_finished_event = true;
      m_stopped_event = object.value("stopped").toBool();
    } else if (kind == "error") {
      m_last_error = object.value("message").toString();
    }
    Q_EMIT event(object);
  }
}

void TrainingProcess::readLog() {
  const auto text = QString::fromUtf8(m_process.readAllStandardError());
  for (auto line : text.split('\n', Qt::SkipEmptyParts)) {
    // The terminal progress bar redraws with carriage returns; keep the last state.
    line = line.section('\r', -1);
    if (line.startsWith("npe: error: ")) m_last_error = line.mid(12);
    if (!line.trimmed().isEmpty()) m_last_log_line = line;
    Q_EMIT logLine(line);
  }
}

void TrainingProcess::onFinished(int exit_code, QProcess::ExitStatus status) {
  m_kill_timer.stop();
  readEvents();
  readLog();
  if (m_finished_event && exit_code == 0 && status == QProcess::NormalExit) {
    Q_EMIT ended(!m_stopped_event, m_stopped_event, {});
  } else if (m_stop_requested) {
    Q_EMIT ended(false, true, {});  // killed after the grace period: the last checkpoint stays
  } else {
    Q_EMIT ended(false, false,
                 !m_last_error.isEmpty() ? m_last_error
                 : status == QProcess::CrashExit
                     ? tr("the training process crashed")
                     : tr("the training process exited with status %1").arg(exit_code));
  }
}

}  // namespace npe::widgets
