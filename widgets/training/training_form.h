#pragma once
// The training tab's form for a new job: task, model kind and size (custom widths only where
// the kind has them), steps, the host and its device (asked of npe there), output file, with
// "Start" and "Open job…".

#include <map>
#include <memory>

#include <QList>
#include <QWidget>

#include "training/host_devices.h"
#include "training/training_request.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace npe {
class TaskSource;
}

namespace npe::widgets {

class TrainingForm final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TrainingForm)

 public:
  explicit TrainingForm(QWidget* parent = nullptr);
  ~TrainingForm() override;

  /// The form's current values, and setting them (tests, restoring the last form).
  TrainingRequest request() const;
  void setRequest(const TrainingRequest& request);
  /// Trains on the user's file `path`: a series, or a gridded file (NetCDF, GRIB) by its
  /// suffix; the form shows what it found.
  void useOwnData(const QString& path);
  /// The preview of the task's data (what it found, an example task).
  class TaskDataPreview* dataPreview() const {
    return m_preview;
  }
  /// "Show in the explorer while it trains".
  bool showInExplorer() const;
  /// Problems shown under the buttons (empty clears them).
  void showMessage(const QString& text);
  QLabel* message() const { return m_message; }
  /// The job writing `output_path` was queued: a default file name moves on to a fresh one.
  void outputUsed(const QString& output_path);
  /// "Δ = 4" or "Δ = (10, 10)": the task's shift outside its training range (curve labels).
  QString shiftLabel(const QString& task);
  /// The hosts offered (this computer first), and replacing them (the hosts dialog; tests).
  /// Not saved here: the dialog saves what the user accepts.
  QList<TrainingHost> hosts() const { return m_hosts; }
  void setHosts(const QList<TrainingHost>& hosts);
  /// What the host's npe said about its devices (null before it answered).
  const HostDevicesAnswer* hostDevices(const QString& host_name) const;
  QComboBox* deviceList() const { return m_device; }

 Q_SIGNALS:
  void startRequested();
  /// The user chose a checkpoint whose job to open.
  void openRequested(const QString& path);
  /// The chosen host's npe answered (tests wait on it).
  void hostDevicesAnswered(const QString& host_name);

 private:
  void refreshModels();
  void refreshHosts(const QString& chosen);
  void refreshDevices();
  void editHosts();
  const TrainingHost& currentHost() const;
  void updateSizeFields();
  QString defaultOutputPath() const;
  void followDefaultOutput();
  /// "My data…" or "My pictures…" in the task list: a file dialog (a folder dialog for
  /// pictures), then the task that reads what was chosen.
  void chooseOwnData(bool pictures);
  /// Shows or hides the data rows for the current task and previews its data.
  void refreshData();
  /// Whether a task reads a file the user names (series) or may (era5: another grid).
  static bool takesData(const QString& task);
  const TaskSource* taskSource(const QString& name, QString* problem = nullptr);

  QComboBox* m_task = nullptr;
  QComboBox* m_model = nullptr;
  QComboBox* m_size = nullptr;
  QSpinBox* m_dim_model = nullptr;
  QSpinBox* m_layers = nullptr;
  QSpinBox* m_heads = nullptr;
  QSpinBox* m_pseudo_tokens = nullptr;
  QCheckBox* m_centre_per_task = nullptr;
  QSpinBox* m_steps = nullptr;
  QSpinBox* m_batch = nullptr;
  QDoubleSpinBox* m_learning_rate = nullptr;
  QSpinBox* m_seed = nullptr;
  QComboBox* m_host = nullptr;
  QComboBox* m_device = nullptr;
  QLineEdit* m_output = nullptr;
  QLineEdit* m_data = nullptr;
  QWidget* m_data_row = nullptr;
  /// SSH hosts: copy the data there (else the path names a file on the host).
  QCheckBox* m_copy_data = nullptr;
  QLineEdit* m_task_options = nullptr;
  class TaskDataPreview* m_preview = nullptr;
  int m_last_task_index = 0;
  QSpinBox* m_checkpoint_every = nullptr;
  QSpinBox* m_validation_every = nullptr;
  QCheckBox* m_use_when_started = nullptr;
  QLabel* m_message = nullptr;
  QFormLayout* m_form = nullptr;
  QString m_last_default_output;
  // Task sources made for listing the kinds that fit a task, kept (making one reads data).
  std::map<QString, std::shared_ptr<const TaskSource>> m_sources;
  std::map<QString, QString> m_source_problems;
  QList<TrainingHost> m_hosts;
  // Each host's answer to `npe devices --json`, asked once per host (its edits ask again).
  std::map<QString, HostDevicesAnswer> m_host_devices;
  HostDevicesProbe* m_probe = nullptr;
};

}  // namespace npe::widgets
