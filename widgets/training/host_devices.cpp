#include "training/host_devices.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace npe::widgets {
namespace {

// The `npe devices --json` answers this program reads (the "protocol" field).
constexpr int kDevicesProtocol = 1;

// ssh's exit status for its own failures (connection, authentication, host key), and a POSIX
// shell's for a command it cannot find.
constexpr int kSshFailed = 255;
constexpr int kCommandNotFound = 127;

// The first line that says something: not CLI11's "Run with --help" hint.
QString first_message(const QByteArray& text) {
  for (const auto& line : QString::fromUtf8(text).split('\n')) {
    const auto trimmed = line.trimmed();
    if (!trimmed.isEmpty() && !trimmed.startsWith("Run with --help")) return trimmed;
  }
  return {};
}

}  // namespace

HostDevicesAnswer read_devices_answer(const TrainingHost& host, int exit_code,
                                      const QByteArray& standard_output,
                                      const QByteArray& standard_error) {
  HostDevicesAnswer answer;
  const auto said = first_message(standard_error);
  const auto where = host.remote() ? QObject::tr("on %1").arg(host.name) : QObject::tr("here");
  if (exit_code == -1) {
    answer.problem = said;
    return answer;
  }
  if (host.remote() && exit_code == kSshFailed) {
    answer.problem = QObject::tr("ssh could not reach %1: %2").arg(host.destination, said);
    return answer;
  }
  if (exit_code == kCommandNotFound) {
    answer.problem =
        QObject::tr("There is no npe program at %1 %2 (%3).")
            .arg(host.npe_path, where, said.isEmpty() ? QObject::tr("not found") : said);
    return answer;
  }
  if (exit_code != 0) {
    // An npe older than `npe devices` refuses the word: CLI11 names it.
    if (said.contains("devices")) {
      answer.problem = QObject::tr(
                           "The npe %1 is older than this program (it has no `npe devices`): "
                           "install this version there.")
                           .arg(where);
    } else {
      answer.problem =
          QObject::tr("npe %1 failed (exit status %2): %3").arg(where).arg(exit_code).arg(said);
    }
    return answer;
  }
  QJsonParseError error{};
  // The answer is the last line: a login script on the host may print before it.
  const auto lines = standard_output.trimmed().split('\n');
  const auto json = QJsonDocument::fromJson(lines.back(), &error).object();
  if (error.error != QJsonParseError::NoError || !json.value("devices").isArray()) {
    answer.problem = QObject::tr("npe %1 gave no device list (%2).")
                         .arg(where, QString::fromUtf8(lines.back()).left(200));
    return answer;
  }
  for (const auto& item : json.value("devices").toArray()) {
    const auto device = item.toObject();
    const auto name = device.value("name").toString();
    if (name.isEmpty()) continue;
    answer.devices.push_back({name, device.value("description").toString(name)});
  }
  answer.libtorch = json.value("libtorch").toString();
  if (answer.devices.isEmpty()) {
    answer.problem = QObject::tr("npe %1 listed no devices.").arg(where);
  } else if (json.value("protocol").toInt() > kDevicesProtocol) {
    // Newer: the names it lists are still what its `npe train --device` takes.
    answer.libtorch += QObject::tr(" (a newer npe)");
  }
  return answer;
}

HostDevicesProbe::HostDevicesProbe(QObject* parent) : QObject(parent) {
  m_timeout.setSingleShot(true);
  connect(&m_timeout, &QTimer::timeout, this, [this] {
    m_process.kill();
    m_process.waitForFinished(1000);
    finish(-1, tr("%1 did not answer within %2 s.")
                   .arg(m_host.label())
                   .arg(m_timeout.interval() / 1000)
                   .toUtf8());
  });
  connect(&m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    if (!m_timeout.isActive()) return;  // timed out or cancelled: answered already
    finish(status == QProcess::NormalExit ? code : -1,
           status == QProcess::NormalExit
               ? QByteArray()
               : tr("npe ended abnormally on %1.").arg(m_host.label()).toUtf8());
  });
  connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart || !m_timeout.isActive()) return;
    finish(-1,
           tr("Could not run %1: %2").arg(m_process.program(), m_process.errorString()).toUtf8());
  });
}

HostDevicesProbe::~HostDevicesProbe() {
  m_timeout.stop();
  if (m_process.state() != QProcess::NotRunning) {
    m_process.kill();
    m_process.waitForFinished(1000);
  }
}

void HostDevicesProbe::ask(const TrainingHost& host, int timeout_ms) {
  m_timeout.stop();  // the question under way is dropped
  if (m_process.state() != QProcess::NotRunning) {
    m_process.kill();
    m_process.waitForFinished(1000);
  }
  m_host = host;
  // No folder to create for a question: the plain `npe devices --json`.
  auto command = host.npe_command({"devices", "--json"}, /*create_folder=*/false);
  m_timeout.start(timeout_ms);
  m_process.start(command.program, command.arguments);
}

void HostDevicesProbe::finish(int exit_code, const QByteArray& reason) {
  m_timeout.stop();
  const auto out = m_process.readAllStandardOutput();
  const auto err = reason.isEmpty() ? m_process.readAllStandardError() : reason;
  Q_EMIT answered(m_host, read_devices_answer(m_host, exit_code, out, err));
}

}  // namespace npe::widgets
