#include "training/training_host.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>

#include "training/training_request.h"

namespace npe::widgets {
namespace {

QString kind_name(TrainingHost::Kind kind) {
  switch (kind) {
    case TrainingHost::Kind::ThisComputer:
      return QStringLiteral("this-computer");
    case TrainingHost::Kind::LocalProgram:
      return QStringLiteral("program");
    case TrainingHost::Kind::Ssh:
      return QStringLiteral("ssh");
  }
  return {};
}

// ssh and scp never stop to ask for a password or a host key: there is no terminal to answer
// on, and a job must fail with ssh's message instead of waiting for ever.
const QStringList kNonInteractive = {QStringLiteral("-o"), QStringLiteral("BatchMode=yes")};

// "a/b//" -> "a/b": paths joined with '/' after it get one separator ("/" stays "/").
QString without_trailing_slashes(QString path) {
  while (path.size() > 1 && path.endsWith('/')) path.chop(1);
  return path;
}

}  // namespace

QString shell_quote(const QString& text) {
  QString quoted = text;
  quoted.replace('\'', QStringLiteral("'\\''"));
  return '\'' + quoted + '\'';
}

TrainingHost this_computer() {
  TrainingHost host;
  host.name = QObject::tr("This computer");
  return host;
}

QString TrainingHost::label() const {
  switch (kind) {
    case Kind::ThisComputer:
      return name;
    case Kind::LocalProgram:
      return QObject::tr("%1 (%2)").arg(name, npe_path);
    case Kind::Ssh:
      return QObject::tr("%1 (ssh %2)").arg(name, destination);
  }
  return name;
}

QString TrainingHost::problem() const {
  if (name.trimmed().isEmpty()) return QObject::tr("Give the host a name.");
  if (kind == Kind::LocalProgram && !QFileInfo(npe_path).isExecutable()) {
    return QObject::tr("%1 is not an executable program.").arg(npe_path);
  }
  if (kind == Kind::Ssh) {
    if (destination.trimmed().isEmpty() || destination.startsWith('-')) {
      return QObject::tr("Give the host's ssh destination (user@computer or an alias).");
    }
    if (npe_path.trimmed().isEmpty()) return QObject::tr("Give the path of npe on the host.");
    if (remote_folder.trimmed().isEmpty()) {
      return QObject::tr("Give the folder on the host where checkpoints are written.");
    }
  }
  return {};
}

HostCommand TrainingHost::npe_command(const QStringList& npe_arguments, bool create_folder) const {
  switch (kind) {
    case Kind::ThisComputer:
      return {npe_executable(), npe_arguments};
    case Kind::LocalProgram:
      return {npe_path, npe_arguments};
    case Kind::Ssh:
      break;
  }
  // ssh joins its words with spaces and the host's shell splits them again: one quoted word
  // each. `exec` leaves npe as the session's process, so that a hang-up reaches it.
  QStringList words{shell_quote(npe_path)};
  for (const auto& a : npe_arguments) words << shell_quote(a);
  const auto remote = create_folder ? QStringLiteral("mkdir -p %1 && exec %2")
                                          .arg(shell_quote(remote_folder), words.join(' '))
                                    : QStringLiteral("exec %1").arg(words.join(' '));
  return {QStringLiteral("ssh"),
          ssh_options + kNonInteractive + QStringList{"-T", destination, "--", remote}};
}

QString TrainingHost::host_path(const QString& local_path) const {
  if (!remote()) return local_path;
  return without_trailing_slashes(remote_folder) + '/' + QFileInfo(local_path).fileName();
}

HostCommand TrainingHost::copy_back(const QString& host_file, const QString& folder) const {
  // OpenSSH 9's scp transfers over SFTP: the host's shell does not see the paths.
  return {QStringLiteral("scp"),
          ssh_options + kNonInteractive +
              QStringList{"-q", destination + ':' + host_file,
                          destination + ':' + host_file + ".json", folder + '/'}};
}

QString TrainingHost::host_data_folder() const {
  return without_trailing_slashes(remote_folder) + QStringLiteral("/data");
}

QString TrainingHost::host_data_path(const QString& local_data) const {
  return host_data_folder() + '/' + QFileInfo(without_trailing_slashes(local_data)).fileName();
}

HostCommand TrainingHost::make_data_folder() const {
  return {QStringLiteral("ssh"),
          ssh_options + kNonInteractive +
              QStringList{"-T", destination, "--",
                          QStringLiteral("mkdir -p %1").arg(shell_quote(host_data_folder()))}};
}

HostCommand TrainingHost::copy_data(const QString& local_data) const {
  // Into the data folder: a file lands as data/<name>, a folder (-r, with everything in it) as
  // data/<name>/, a later copy over the earlier one.
  return {QStringLiteral("scp"), ssh_options + kNonInteractive +
                                     QStringList{"-q", "-r", without_trailing_slashes(local_data),
                                                 destination + ':' + host_data_folder() + '/'}};
}

QJsonObject TrainingHost::to_json() const {
  return {
      {"kind", kind_name(kind)},        {"name", name},
      {"destination", destination},     {"npe_path", npe_path},
      {"remote_folder", remote_folder}, {"ssh_options", QJsonArray::fromStringList(ssh_options)}};
}

TrainingHost TrainingHost::from_json(const QJsonObject& json) {
  TrainingHost host;
  const auto kind = json.value("kind").toString();
  host.kind = kind == "ssh"       ? Kind::Ssh
              : kind == "program" ? Kind::LocalProgram
                                  : Kind::ThisComputer;
  host.name = json.value("name").toString();
  host.destination = json.value("destination").toString();
  host.npe_path = json.value("npe_path").toString();
  host.remote_folder = json.value("remote_folder").toString();
  for (const auto& option : json.value("ssh_options").toArray()) {
    host.ssh_options << option.toString();
  }
  return host;
}

bool TrainingHost::operator==(const TrainingHost& other) const {
  return to_json() == other.to_json();
}

QList<TrainingHost> load_training_hosts(QSettings& settings) {
  QList<TrainingHost> hosts{this_computer()};
  const auto saved = QJsonDocument::fromJson(settings.value("training/hosts").toByteArray());
  for (const auto& item : saved.array()) {
    auto host = TrainingHost::from_json(item.toObject());
    // A damaged entry is left out rather than offered as a host that cannot work.
    if (host.kind != TrainingHost::Kind::ThisComputer && host.problem().isEmpty()) hosts << host;
  }
  return hosts;
}

void save_training_hosts(QSettings& settings, const QList<TrainingHost>& hosts) {
  QJsonArray saved;
  for (const auto& host : hosts) {
    if (host.kind != TrainingHost::Kind::ThisComputer) saved.append(host.to_json());
  }
  settings.setValue("training/hosts", QJsonDocument(saved).toJson(QJsonDocument::Compact));
}

}  // namespace npe::widgets
