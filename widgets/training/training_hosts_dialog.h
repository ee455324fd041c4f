#pragma once
// The training hosts the form offers besides this computer: SSH destinations (with the path of
// npe there and the folder for its checkpoints) and other npe programs here (a CUDA build),
// each added, edited, tested (`npe devices --json` there) and removed. The caller saves them.

#include <QDialog>
#include <QList>

#include "training/training_host.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QWidget;

namespace npe::widgets {

class HostDevicesProbe;

class TrainingHostsDialog final : public QDialog {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TrainingHostsDialog)

 public:
  explicit TrainingHostsDialog(const QList<TrainingHost>& hosts, QWidget* parent = nullptr);
  ~TrainingHostsDialog() override;

  /// This computer first, then the hosts as edited.
  QList<TrainingHost> hosts() const;
  /// Why the hosts cannot be kept as they are (a host's problem, two with one name), or empty.
  QString problem() const;
  /// Adds a host and selects it (the "Add" buttons; tests).
  void addHost(const TrainingHost& host);
  /// Runs `npe devices --json` on the selected host; the answer is shown under the fields.
  void testSelected();
  QLabel* testResult() const { return m_test_result; }

  void accept() override;

 private:
  void showSelected();
  void storeFields();
  TrainingHost* selected();

  QList<TrainingHost> m_hosts;  // without this computer
  QListWidget* m_list = nullptr;
  QComboBox* m_kind = nullptr;
  QLineEdit* m_name = nullptr;
  QLineEdit* m_destination = nullptr;
  QLineEdit* m_npe_path = nullptr;
  QLineEdit* m_remote_folder = nullptr;
  QLineEdit* m_ssh_options = nullptr;
  QWidget* m_fields = nullptr;
  QLabel* m_test_result = nullptr;
  QLabel* m_message = nullptr;
  QPushButton* m_test = nullptr;
  HostDevicesProbe* m_probe = nullptr;
  bool m_showing = false;
};

}  // namespace npe::widgets
