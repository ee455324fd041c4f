#pragma once
// Where a training job runs: this computer's npe, another npe program on this computer (a CUDA
// build), or npe on another computer reached with the user's own `ssh` (their keys and
// ~/.ssh/config). The job is the same `npe train ... --progress-json` everywhere; on an SSH host
// it writes its checkpoints in a folder there, and each is copied back with OpenSSH's scp,
// atomically, into the job's local output path after every checkpoint event.

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

class QSettings;

namespace npe::widgets {

/// A program and its arguments, as QProcess takes them.
struct HostCommand {
  QString program;
  QStringList arguments;
};

struct TrainingHost {
  enum class Kind { ThisComputer, LocalProgram, Ssh };
  Kind kind = Kind::ThisComputer;
  /// Shown in the form and the job table; unique among the saved hosts.
  QString name;
  /// Ssh: anything `ssh` accepts as a destination (user@computer, an alias of ~/.ssh/config).
  QString destination;
  /// Ssh: the npe program on the host ("npe" when it is on the host's PATH); LocalProgram: the
  /// path of the other npe program here.
  QString npe_path;
  /// Ssh: the folder on the host where jobs write their checkpoints (created when missing).
  QString remote_folder;
  /// Ssh: options given to both ssh and scp before the destination, e.g. {"-F", "config"}.
  QStringList ssh_options;

  bool remote() const { return kind == Kind::Ssh; }
  /// "This computer", "gpu-box (ssh alice@gpu-box)", ...
  QString label() const;
  /// The problem with the host's settings, one sentence (empty when it can be used).
  QString problem() const;

  /// How to run `npe npe_arguments` there (for ssh: the remote command, each word quoted for
  /// the host's shell, after creating the checkpoint folder unless `create_folder` is false).
  HostCommand npe_command(const QStringList& npe_arguments, bool create_folder = true) const;
  /// Where the host writes the checkpoint whose local copy is `local_path`: the remote folder
  /// and the same file name. Here: `local_path` itself.
  QString host_path(const QString& local_path) const;
  /// Copies the host's checkpoint `host_file` and its ".json" metadata into `folder` here.
  HostCommand copy_back(const QString& host_file, const QString& folder) const;
  /// The folder where the host keeps copies of data: data/ in the remote folder.
  QString host_data_folder() const;
  /// Where the host keeps its copy of the data `local_data` (a file or a folder here):
  /// data/<its name> in the remote folder.
  QString host_data_path(const QString& local_data) const;
  /// Makes the folder of host_data_path() on the host (ssh mkdir -p).
  HostCommand make_data_folder() const;
  /// Copies `local_data` (a file, or a folder with everything in it) to host_data_path().
  HostCommand copy_data(const QString& local_data) const;

  QJsonObject to_json() const;
  static TrainingHost from_json(const QJsonObject& json);
  bool operator==(const TrainingHost& other) const;
};

/// "This computer": npe next to this program.
TrainingHost this_computer();

/// `text` as one word for a POSIX shell: single-quoted, its own single quotes escaped.
QString shell_quote(const QString& text);

/// The saved hosts (this computer first, always there) and saving them (settings key
/// "training/hosts").
QList<TrainingHost> load_training_hosts(QSettings& settings);
void save_training_hosts(QSettings& settings, const QList<TrainingHost>& hosts);

}  // namespace npe::widgets

Q_DECLARE_METATYPE(npe::widgets::TrainingHost)
