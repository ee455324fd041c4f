#pragma once
// What a training host can train on, asked of the npe there (`npe devices --json`, over ssh
// for an SSH host) without blocking the GUI: the form's Device list, and a clear sentence when
// the host cannot be used (ssh cannot connect or authenticate, no npe at that path, an npe too
// old to have the command).

#include <QList>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTimer>

#include "training/training_host.h"

namespace npe::widgets {

struct HostDevice {
  QString name;         // what `npe train --device` takes: "cpu", "cuda"
  QString description;  // "CPU (16 cores)", "CUDA (1 GPU)"
};

struct HostDevicesAnswer {
  QList<HostDevice> devices;  // empty when the host could not be asked
  QString libtorch;           // the libtorch version of npe there
  QString problem;            // why not, one or two sentences (empty when answered)
  bool ok() const { return problem.isEmpty(); }
};

/// Reads what `npe devices --json` run on `host` printed and how it ended (exit code -1: it
/// could not be started or timed out, `standard_error` then holds the reason).
HostDevicesAnswer read_devices_answer(const TrainingHost& host, int exit_code,
                                      const QByteArray& standard_output,
                                      const QByteArray& standard_error);

/// Asks one host at a time; asking again cancels the question under way.
class HostDevicesProbe final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(HostDevicesProbe)

 public:
  explicit HostDevicesProbe(QObject* parent = nullptr);
  ~HostDevicesProbe() override;

  void ask(const TrainingHost& host, int timeout_ms = 30000);
  bool busy() const { return m_timeout.isActive(); }
  /// The host asked last.
  const TrainingHost& host() const { return m_host; }

 Q_SIGNALS:
  void answered(const npe::widgets::TrainingHost& host,
                const npe::widgets::HostDevicesAnswer& answer);

 private:
  void finish(int exit_code, const QByteArray& reason = {});

  QProcess m_process;
  QTimer m_timeout;
  TrainingHost m_host;
};

}  // namespace npe::widgets

Q_DECLARE_METATYPE(npe::widgets::HostDevicesAnswer)
