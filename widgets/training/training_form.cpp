#include "training/training_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QVBoxLayout>

#include <torch/cuda.h>

#include "npe/data/series_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/models/model_config.h"
#include "npe/models/model_registry.h"
#include "training/task_data_preview.h"
#include "training/training_hosts_dialog.h"

namespace npe::widgets {
namespace {

// The task list's entries that ask for a file or a folder of pictures of the user's.
constexpr const char* kOwnDataItem = "own-data";
constexpr const char* kOwnPicturesItem = "own-pictures";

const char* const kDataFilter =
    "Series, grids and picture files (*.csv *.tsv *.txt *.dat *.nc *.nc4 *.grib *.grb *.grib2 "
    "*ubyte *ubyte.gz *.idx *.bin);;All files (*)";

// The task that reads `path`: a folder, an IDX file or a CIFAR-10 batch are pictures, NetCDF
// and GRIB files gridded, anything else a series.
QString task_reading(const QString& path) {
  const QFileInfo info(path);
  if (info.isDir()) return "pictures";
  const auto name = info.fileName().toLower();
  const auto suffix = info.suffix().toLower();
  if (name.contains("ubyte") || suffix == "idx" || suffix == "bin") return "pictures";
  const bool grid = suffix == "nc" || suffix == "nc4" || suffix.startsWith("grib") ||
                    suffix == "grb" || suffix == "grb2";
  return grid ? "gridded" : "series";
}

// Name and memory of the first GPU, from nvidia-smi (libtorch's CPU builds cannot ask CUDA).
QString gpu_description() {
  QProcess smi;
  smi.start("nvidia-smi", {"--query-gpu=name,memory.total", "--format=csv,noheader"});
  if (!smi.waitForFinished(3000) || smi.exitCode() != 0) return {};
  return QString::fromUtf8(smi.readAllStandardOutput()).section('\n', 0, 0).trimmed();
}

// This computer's devices: the GPU's name once (nvidia-smi takes a moment).
const HostDevicesAnswer& this_computers_devices() {
  static const HostDevicesAnswer answer = [] {
    HostDevicesAnswer a;
    a.devices.push_back({"cpu", QObject::tr("CPU")});
    if (torch::cuda::is_available()) {
      const auto gpu = gpu_description();
      a.devices.push_back({"cuda", QObject::tr("CUDA — %1").arg(gpu.isEmpty() ? "GPU 0" : gpu)});
    }
    return a;
  }();
  return answer;
}

}  // namespace

TrainingForm::TrainingForm(QWidget* parent) : QWidget(parent) {
  auto* column = new QVBoxLayout(this);
  auto* box = new QGroupBox(tr("New training job"), this);
  m_form = new QFormLayout(box);
  m_task = new QComboBox(box);
  m_task->setObjectName("task");
  for (const auto& info : task_infos()) {
    m_task->addItem(QString::fromStdString(info.name), QString::fromStdString(info.name));
    m_task->setItemData(m_task->count() - 1, QString::fromStdString(info.description),
                        Qt::ToolTipRole);
  }
  m_task->addItem(tr("My data…"), QString(kOwnDataItem));
  m_task->setItemData(m_task->count() - 1,
                      tr("Train on your own file: a series (CSV, TSV or whitespace with a header), "
                         "a gridded temperature file (NetCDF, GRIB), an IDX file or a CIFAR-10 "
                         "batch"),
                      Qt::ToolTipRole);
  m_task->addItem(tr("My pictures…"), QString(kOwnPicturesItem));
  m_task->setItemData(m_task->count() - 1,
                      tr("Train on a folder of your pictures (PNG or JPEG, in sub-folders too), "
                         "grey or colour"),
                      Qt::ToolTipRole);
  // The task's data file and settings, shown for tasks that read a file of the user's.
  m_data = new QLineEdit(box);
  m_data->setObjectName("data");
  m_data->setPlaceholderText(tr("the task's file"));
  m_data->setToolTip(
      tr("On an SSH host: copied there (Copy to the host), or a path on that "
         "host"));
  auto* browse_data = new QPushButton(tr("…"), box);
  browse_data->setToolTip(tr("Choose your data file"));
  m_data_row = new QWidget(box);
  auto* data_row = new QHBoxLayout(m_data_row);
  data_row->setContentsMargins(0, 0, 0, 0);
  data_row->addWidget(m_data, 1);
  data_row->addWidget(browse_data);
  m_copy_data = new QCheckBox(tr("Copy to the host"), box);
  m_copy_data->setObjectName("copy_data");
  m_copy_data->setChecked(true);
  m_copy_data->setToolTip(
      tr("Copy the data from this computer to the host before the job "
         "starts; off: the path names a file or folder on the host"));
  m_copy_data->setVisible(false);
  data_row->addWidget(m_copy_data);
  m_task_options = new QLineEdit(box);
  m_task_options->setObjectName("task_options");
  m_task_options->setPlaceholderText(tr("e.g. y=OT window=48 split=series id=station"));
  m_task_options->setToolTip(
      tr("Settings of the task, KEY=VALUE separated by spaces, as npe train --task-option: "
         "series: x, y (columns, comma-separated), id, window (x units; hours for dates), "
         "num_points, split (tail or series), train_fraction, validation_fraction; "
         "pictures: size (pixels a side; 0: the pictures' own), colour (auto, grey, rgb), "
         "canvas, train_max_translation, max_targets, validation_fraction, test_fraction"));
  m_preview = new TaskDataPreview(box);
  m_model = new QComboBox(box);
  m_size = new QComboBox(box);
  m_size->addItem(tr("small (CPU, minutes)"), "small");
  m_size->addItem(tr("medium (the paper's transformer; CPU, hours)"), "medium");
  m_size->addItem(tr("paper (Appendix F sizes; GPU)"), "paper");
  m_size->addItem(tr("custom widths"), "custom");
  auto spin = [box](int low, int high, int value, const QString& tip) {
    auto* s = new QSpinBox(box);
    s->setRange(low, high);
    s->setValue(value);
    s->setToolTip(tip);
    return s;
  };
  // The widths' ranges and help are the chosen kind's options' (updateSizeFields).
  m_dim_model = spin(1, 1 << 30, 64, {});
  m_dim_model->setObjectName("dim_model");
  m_layers = spin(1, 1 << 30, 4, {});
  m_layers->setObjectName("num_layers");
  m_heads = spin(1, 1 << 30, 4, {});
  m_heads->setObjectName("num_heads");
  m_pseudo_tokens = spin(1, 1 << 30, 32, {});
  m_pseudo_tokens->setObjectName("num_pseudo_tokens");
  m_centre_per_task = new QCheckBox(tr("Centre each task on its context"), box);
  m_centre_per_task->setObjectName("centre_per_task");
  m_centre_per_task->setToolTip(
      tr("The model sees each task's outputs minus its context's mean, and its predictions are "
         "moved back: it then takes a series whose level leaves the training data's (a colder "
         "week, another sensor) as it takes its training data (model option centre_per_task)"));
  // The training settings' ranges and help are core's, as npe train checks them.
  auto setting = [&](const char* name, int value) {
    const auto field = training_setting(name);
    auto* box = spin(int(field.min.get<int64_t>()), int(field.max.get<int64_t>()), value,
                     QString::fromStdString(field.help));
    box->setObjectName(name);
    return box;
  };
  m_steps = setting("steps", 2000);
  m_batch = setting("batch_size", 16);
  const auto learning_rate = training_setting("learning_rate");
  m_learning_rate = new QDoubleSpinBox(box);
  m_learning_rate->setDecimals(6);  // the smallest rate, 1e-6, shows
  m_learning_rate->setRange(learning_rate.min.get<double>(), learning_rate.max.get<double>());
  m_learning_rate->setSingleStep(0.0001);
  m_learning_rate->setValue(5e-4);
  m_learning_rate->setToolTip(QString::fromStdString(learning_rate.help));
  m_learning_rate->setObjectName("learning_rate");
  m_seed = spin(0, 1000000, 0, tr("Seed of the weights and the training tasks"));
  m_host = new QComboBox(box);
  m_host->setObjectName("host");
  auto* edit_hosts = new QPushButton(tr("Hosts…"), box);
  edit_hosts->setToolTip(tr("Add, edit and test SSH hosts and other npe programs"));
  auto* host_row = new QHBoxLayout;
  host_row->addWidget(m_host, 1);
  host_row->addWidget(edit_hosts);
  m_device = new QComboBox(box);
  m_probe = new HostDevicesProbe(this);
  m_output = new QLineEdit(box);
  auto* browse = new QPushButton(tr("…"), box);
  browse->setToolTip(tr("Choose the checkpoint file"));
  auto* output_row = new QHBoxLayout;
  output_row->addWidget(m_output, 1);
  output_row->addWidget(browse);
  m_checkpoint_every = spin(0, 10000000, 100, tr("Write the resumable checkpoint every N steps"));
  m_validation_every = setting("validation_every", 100);
  m_validation_every->setToolTip(
      tr("Measure validation, shifted and equivariance metrics every N steps (0: only at the "
         "end)"));
  m_use_when_started = new QCheckBox(tr("Show in the explorer while it trains"), box);
  m_use_when_started->setChecked(true);

  m_form->addRow(tr("Task"), m_task);
  m_form->addRow(tr("Data"), m_data_row);
  m_form->addRow(tr("Task options"), m_task_options);
  m_form->addRow(m_preview);
  m_form->addRow(tr("Model"), m_model);
  m_form->addRow(tr("Size"), m_size);
  m_form->addRow(tr("D_z"), m_dim_model);
  m_form->addRow(tr("Layers"), m_layers);
  m_form->addRow(tr("Heads"), m_heads);
  m_form->addRow(tr("Pseudo-tokens M"), m_pseudo_tokens);
  m_form->addRow(m_centre_per_task);
  m_form->addRow(tr("Steps"), m_steps);
  m_form->addRow(tr("Batch size"), m_batch);
  m_form->addRow(tr("Learning rate"), m_learning_rate);
  m_form->addRow(tr("Seed"), m_seed);
  m_form->addRow(tr("Host"), host_row);
  m_form->addRow(tr("Device"), m_device);
  m_form->addRow(tr("Output"), output_row);
  m_form->addRow(tr("Checkpoint every"), m_checkpoint_every);
  m_form->addRow(tr("Validate every"), m_validation_every);
  m_form->addRow(m_use_when_started);

  auto* start = new QPushButton(tr("Start"), box);
  start->setDefault(true);
  start->setToolTip(tr("Queue the job; it starts as soon as its device is free"));
  auto* open = new QPushButton(tr("Open job…"), box);
  open->setToolTip(
      tr("Add the job of a checkpoint written by training (to see its curves or "
         "resume it)"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start);
  buttons->addWidget(open);
  m_form->addRow(buttons);
  m_message = new QLabel(box);
  m_message->setWordWrap(true);
  m_message->setStyleSheet("color: #b00020");
  m_form->addRow(m_message);
  column->addWidget(box);
  column->addStretch(1);

  connect(m_task, &QComboBox::currentIndexChanged, this, [this] {
    if (m_task->currentData().toString() == kOwnDataItem) {
      chooseOwnData(false);
      return;
    }
    if (m_task->currentData().toString() == kOwnPicturesItem) {
      chooseOwnData(true);
      return;
    }
    m_last_task_index = m_task->currentIndex();
    refreshData();
    refreshModels();
    followDefaultOutput();
  });
  connect(browse_data, &QPushButton::clicked, this, [this] {
    // Pictures are a folder; everything else a file.
    const auto path =
        m_task->currentData().toString() == "pictures"
            ? QFileDialog::getExistingDirectory(this, tr("Your pictures"), m_data->text())
            : QFileDialog::getOpenFileName(this, tr("Your data"), m_data->text(), tr(kDataFilter));
    if (!path.isEmpty()) m_data->setText(path);
  });
  connect(m_data, &QLineEdit::editingFinished, this, [this] { refreshData(); });
  connect(m_data, &QLineEdit::textChanged, this, [this] {
    if (!m_data->hasFocus()) refreshData();  // set by the dialog or a program, not typed
  });
  connect(m_task_options, &QLineEdit::editingFinished, this, [this] { refreshData(); });
  connect(m_preview, &TaskDataPreview::shown, this, [this](bool ok, const QString&) {
    if (ok) refreshModels();  // the kinds that fit the data's D_y
  });
  connect(m_model, &QComboBox::currentIndexChanged, this, [this] {
    updateSizeFields();
    followDefaultOutput();
  });
  connect(m_size, &QComboBox::currentIndexChanged, this, [this] { updateSizeFields(); });
  connect(browse, &QPushButton::clicked, this, [this] {
    const auto path = QFileDialog::getSaveFileName(this, tr("Checkpoint file"), m_output->text(),
                                                   tr("Checkpoints (*.pt)"));
    if (!path.isEmpty()) m_output->setText(path);
  });
  connect(m_host, &QComboBox::currentIndexChanged, this, [this] {
    m_message->clear();
    m_copy_data->setVisible(currentHost().remote());
    refreshDevices();
  });
  connect(edit_hosts, &QPushButton::clicked, this, &TrainingForm::editHosts);
  connect(m_probe, &HostDevicesProbe::answered, this,
          [this](const TrainingHost& host, const HostDevicesAnswer& answer) {
            m_host_devices[host.name] = answer;
            if (host.name == currentHost().name) refreshDevices();
            Q_EMIT hostDevicesAnswered(host.name);
          });
  connect(start, &QPushButton::clicked, this, &TrainingForm::startRequested);
  connect(open, &QPushButton::clicked, this, [this] {
    const auto path =
        QFileDialog::getOpenFileName(this, tr("Open training job"), {}, tr("Checkpoints (*.pt)"));
    if (!path.isEmpty()) Q_EMIT openRequested(path);
  });
  QSettings settings;
  setHosts(load_training_hosts(settings));
  refreshData();
  refreshModels();
  updateSizeFields();
  // After refreshModels: the default file is named after the model kind.
  m_last_default_output = defaultOutputPath();
  m_output->setText(m_last_default_output);
}

TrainingForm::~TrainingForm() = default;

bool TrainingForm::takesData(const QString& task) {
  return task == "series" || task == "era5" || task == "gridded" || task == "pictures";
}

void TrainingForm::chooseOwnData(bool pictures) {
  const auto path =
      pictures
          ? QFileDialog::getExistingDirectory(this, tr("Your pictures"), m_data->text())
          : QFileDialog::getOpenFileName(this, tr("Your data"), m_data->text(), tr(kDataFilter));
  if (path.isEmpty()) {
    QSignalBlocker block(m_task);
    m_task->setCurrentIndex(m_last_task_index);  // cancelled: the task chosen before
    return;
  }
  useOwnData(path);
}

void TrainingForm::useOwnData(const QString& path) {
  {
    QSignalBlocker block_task(m_task);
    QSignalBlocker block_data(m_data);
    m_data->setText(path);
    m_task->setCurrentIndex(std::max(0, m_task->findData(task_reading(path))));
  }
  m_last_task_index = m_task->currentIndex();
  refreshData();
  refreshModels();
  followDefaultOutput();
}

void TrainingForm::refreshData() {
  const auto task = m_task->currentData().toString();
  const bool shown = takesData(task);
  for (QWidget* field :
       {static_cast<QWidget*>(m_data_row), static_cast<QWidget*>(m_task_options)}) {
    field->setVisible(shown);
    if (auto* label = m_form->labelForField(field)) label->setVisible(shown);
  }
  m_data->setPlaceholderText(task == "pictures" ? tr("a folder of pictures, an IDX file or a "
                                                     "CIFAR-10 batch folder")
                                                : tr("the task's file"));
  m_task_options->setPlaceholderText(task == "pictures" ? tr("e.g. size=32 colour=grey")
                                     : task == "era5" || task == "gridded"
                                         ? tr("e.g. variable=t2m step_hours=24")
                                         : tr("e.g. y=OT window=48 split=series "
                                              "id=station"));
  // The user's own data (series, pictures) has a preview from the start, saying what to choose.
  const bool own = task == "series" || task == "pictures";
  m_preview->setVisible(shown && (own || !m_data->text().trimmed().isEmpty()));
  if (!m_preview->isVisibleTo(this)) return;
  if (own && m_data->text().trimmed().isEmpty()) {
    m_preview->showTask({}, {{"kind", task.toStdString()}});
    return;
  }
  nlohmann::json settings;
  try {
    settings = request().taskSettings();
  } catch (const Error& e) {
    m_message->setText(QString::fromStdString(e.what()));
    return;
  }
  m_message->clear();
  m_preview->showTask(task, settings);
}

bool TrainingForm::showInExplorer() const {
  return m_use_when_started->isChecked();
}

void TrainingForm::showMessage(const QString& text) {
  m_message->setText(text);
}

void TrainingForm::followDefaultOutput() {
  if (m_output->text() != m_last_default_output) return;  // the user's own file name stays
  m_last_default_output = defaultOutputPath();
  m_output->setText(m_last_default_output);
}

void TrainingForm::outputUsed(const QString& output_path) {
  if (output_path != m_last_default_output) return;
  m_last_default_output = defaultOutputPath();
  if (m_last_default_output == output_path) m_last_default_output.replace(".pt", "-2.pt");
  m_output->setText(m_last_default_output);
}

const TaskSource* TrainingForm::taskSource(const QString& name, QString* problem) {
  if (name == "series" || name == "pictures") {
    // The user's series or pictures, once read; before that a task of the same inputs stands
    // in (1-D, or pictures' 2-D canvas), which is what decides the kinds that fit.
    if (const auto source = m_preview->source()) return source.get();
    return taskSource(name == "series" ? "gp1d" : "tfmnist", problem);
  }
  if (auto found = m_sources.find(name); found != m_sources.end()) return found->second.get();
  if (auto found = m_source_problems.find(name); found != m_source_problems.end()) {
    if (problem) *problem = found->second;
    return nullptr;
  }
  try {
    auto source = std::shared_ptr<const TaskSource>(make_task_source(name.toStdString()));
    return (m_sources[name] = source).get();
  } catch (const Error& e) {
    m_source_problems[name] = QString::fromStdString(e.what());
    if (problem) *problem = QString::fromStdString(e.what());
    return nullptr;
  }
}

QString TrainingForm::shiftLabel(const QString& task) {
  const auto* source = taskSource(task);
  if (!source) return {};
  QStringList parts;
  const auto shift = task == "series" ? Translation{SeriesTaskSource::kOutOfRangeShift}
                                      : source->out_of_range_translation();
  for (double v : shift) parts << QString::number(v);
  return parts.size() == 1 ? "Δ = " + parts.front() : "Δ = (" + parts.join(", ") + ")";
}

void TrainingForm::refreshModels() {
  const auto previous = m_model->currentData().toString();
  QSignalBlocker block(m_model);
  m_model->clear();
  QString problem;
  const auto* source = taskSource(m_task->currentData().toString(), &problem);
  if (!source) {
    m_message->setText(problem);
    return;
  }
  // The kinds whose size presets fit this task (the 1-D ConvCNP does not take images, ...).
  for (const auto& info : model_infos()) {
    try {
      default_model_config(info.kind, "small", *source);
    } catch (const Error&) {
      continue;
    }
    m_model->addItem(QString::fromStdString(info.display_name), QString::fromStdString(info.kind));
    m_model->setItemData(
        m_model->count() - 1,
        QString::fromStdString(info.description) +
            (info.translation_equivariant ? tr(" Translation equivariant.") : QString()),
        Qt::ToolTipRole);
  }
  const int index = m_model->findData(previous.isEmpty() ? QString("tetnp") : previous);
  m_model->setCurrentIndex(std::max(0, index));
}

void TrainingForm::updateSizeFields() {
  // Custom widths: the fields the chosen kind has (a CNP has no layers or pseudo-tokens).
  const bool custom = m_size->currentData().toString() == "custom";
  const auto kind = m_model->currentData().toString();
  const std::pair<QSpinBox*, const char*> fields[] = {{m_dim_model, "dim_model"},
                                                      {m_layers, "num_layers"},
                                                      {m_heads, "num_heads"},
                                                      {m_pseudo_tokens, "num_pseudo_tokens"}};
  for (const auto& [field, name] : fields) {
    const auto option = modelOption(kind, name);
    if (option) {
      // The option's own limits and help, as npe train checks them.
      field->setRange(int(option->min.get<int64_t>()), int(option->max.get<int64_t>()));
      auto help = QString::fromStdString(option->help);
      if (field == m_heads) help += tr(" (must divide D_z: each head is D_z / H wide)");
      field->setToolTip(help);
    }
    const bool shown = custom && option;
    field->setVisible(shown);
    if (auto* label = m_form->labelForField(field)) label->setVisible(shown);
  }
}

QString TrainingForm::defaultOutputPath() const {
  const auto folder =
      QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/training";
  return QString("%1/%2-%3-%4.pt")
      .arg(folder, m_model->currentData().toString(), m_task->currentData().toString(),
           QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss"));
}

const TrainingHost& TrainingForm::currentHost() const {
  const int index = std::max(0, m_host->currentIndex());
  return m_hosts.at(std::min<int>(index, static_cast<int>(m_hosts.size()) - 1));
}

void TrainingForm::setHosts(const QList<TrainingHost>& hosts) {
  const auto chosen = m_host->currentData().toString();
  m_hosts.clear();
  m_hosts << this_computer();
  for (const auto& host : hosts) {
    if (host.kind != TrainingHost::Kind::ThisComputer) m_hosts << host;
  }
  // An edited host may have another npe: ask again.
  m_host_devices.clear();
  refreshHosts(chosen);
}

void TrainingForm::refreshHosts(const QString& chosen) {
  {
    QSignalBlocker block(m_host);
    m_host->clear();
    for (const auto& host : m_hosts) {
      m_host->addItem(host.name, host.name);
      m_host->setItemData(m_host->count() - 1, host.label(), Qt::ToolTipRole);
    }
    m_host->setCurrentIndex(std::max(0, m_host->findData(chosen)));
  }
  refreshDevices();
}

const HostDevicesAnswer* TrainingForm::hostDevices(const QString& host_name) const {
  const auto found = m_host_devices.find(host_name);
  return found == m_host_devices.end() ? nullptr : &found->second;
}

void TrainingForm::refreshDevices() {
  const auto previous = m_device->currentData().toString();
  const auto& host = currentHost();
  const bool here = host.kind == TrainingHost::Kind::ThisComputer;
  const HostDevicesAnswer* answer = here ? &this_computers_devices() : hostDevices(host.name);
  QSignalBlocker block(m_device);
  m_device->clear();
  m_device->addItem(tr("auto"), "auto");
  const auto has = [answer](const QString& name) {
    return answer && std::any_of(answer->devices.begin(), answer->devices.end(),
                                 [&name](const HostDevice& d) { return d.name == name; });
  };
  if (answer && answer->ok()) {
    for (const auto& d : answer->devices) {
      m_device->addItem(d.name == "cpu" && here ? tr("CPU") : d.description, d.name);
    }
    if (!has("cuda")) {
      m_device->addItem(tr("CUDA"), "cuda");
      m_device->setItemData(m_device->count() - 1,
                            here ? tr("No CUDA GPU is available to this libtorch")
                                 : tr("npe on %1 sees no CUDA GPU").arg(host.name),
                            Qt::ToolTipRole);
    }
    m_device->setToolTip(has("cuda") ? tr("auto trains on the GPU")
                                     : tr("No GPU: auto trains on the CPU"));
  } else {
    // Not answered (yet): the names npe train takes, for the host to check when it starts.
    m_device->addItem(tr("CPU"), "cpu");
    m_device->addItem(tr("CUDA"), "cuda");
    if (!answer) {
      m_device->setToolTip(tr("Asking npe on %1 which devices it has…").arg(host.name));
      if (!m_probe->busy() || !(m_probe->host() == host)) m_probe->ask(host);
    } else {
      m_device->setToolTip(answer->problem);
      m_message->setText(answer->problem);
    }
  }
  m_device->setCurrentIndex(std::max(0, m_device->findData(previous)));
}

void TrainingForm::editHosts() {
  TrainingHostsDialog dialog(m_hosts, this);
  if (dialog.exec() != QDialog::Accepted) return;
  QSettings settings;
  save_training_hosts(settings, dialog.hosts());
  setHosts(dialog.hosts());
}

TrainingRequest TrainingForm::request() const {
  TrainingRequest r;
  r.task = m_task->currentData().toString();
  r.data_path = m_data->text().trimmed();
  r.task_options = m_task_options->text().trimmed();
  r.model = m_model->currentData().toString();
  r.size = m_size->currentData().toString();
  r.dim_model = m_dim_model->value();
  r.num_layers = m_layers->value();
  r.num_heads = m_heads->value();
  r.num_pseudo_tokens = m_pseudo_tokens->value();
  r.centre_per_task = m_centre_per_task->isChecked();
  r.steps = m_steps->value();
  r.batch_size = m_batch->value();
  r.learning_rate = m_learning_rate->value();
  r.seed = m_seed->value();
  r.device = m_device->currentData().toString();
  r.host = currentHost();
  r.copy_data_to_host = r.host.remote() && m_copy_data->isChecked();
  r.output_path = m_output->text().trimmed();
  r.checkpoint_every = m_checkpoint_every->value();
  r.validation_every = m_validation_every->value();
  return r;
}

void TrainingForm::setRequest(const TrainingRequest& r) {
  {
    QSignalBlocker block(m_data);
    m_data->setText(r.data_path);
    m_task_options->setText(r.task_options);
    m_copy_data->setChecked(r.copy_data_to_host || !r.host.remote());
  }
  const int task_index = std::max(0, m_task->findData(r.task));
  if (task_index == m_task->currentIndex()) refreshData();  // no change of task to trigger it
  m_task->setCurrentIndex(task_index);
  refreshModels();
  m_model->setCurrentIndex(std::max(0, m_model->findData(r.model)));
  m_size->setCurrentIndex(std::max(0, m_size->findData(r.size)));
  m_dim_model->setValue(r.dim_model);
  m_layers->setValue(r.num_layers);
  m_heads->setValue(r.num_heads);
  m_pseudo_tokens->setValue(r.num_pseudo_tokens);
  m_centre_per_task->setChecked(r.centre_per_task);
  m_steps->setValue(r.steps);
  m_batch->setValue(r.batch_size);
  m_learning_rate->setValue(r.learning_rate);
  m_seed->setValue(r.seed);
  auto hosts = m_hosts;
  if (std::none_of(hosts.begin(), hosts.end(),
                   [&r](const TrainingHost& h) { return h.name == r.host.name; })) {
    hosts << r.host;  // a job's host since removed from the list: offered again
    setHosts(hosts);
  }
  m_host->setCurrentIndex(std::max(0, m_host->findData(r.host.name)));
  if (m_device->findData(r.device) < 0) m_device->addItem(r.device.toUpper(), r.device);
  m_device->setCurrentIndex(std::max(0, m_device->findData(r.device)));
  m_output->setText(r.output_path);
  m_checkpoint_every->setValue(r.checkpoint_every);
  m_validation_every->setValue(r.validation_every);
  updateSizeFields();
}

}  // namespace npe::widgets
