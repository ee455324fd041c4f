#include "training/training_tab.h"

#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <torch/cuda.h>

#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/models/model_config.h"
#include "npe/models/model_registry.h"
#include "npe/training/training_job.h"
#include "training/training_process.h"

namespace npe::widgets {
namespace {

QString from_utf8(const std::string& text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

QString state_text(TrainingTab::JobState state) {
  switch (state) {
    case TrainingTab::JobState::Queued:
      return QObject::tr("queued");
    case TrainingTab::JobState::Running:
      return QObject::tr("running");
    case TrainingTab::JobState::Paused:
      return QObject::tr("paused");
    case TrainingTab::JobState::Finished:
      return QObject::tr("finished");
    case TrainingTab::JobState::Stopped:
      return QObject::tr("stopped");
    case TrainingTab::JobState::Failed:
      return QObject::tr("failed");
  }
  return {};
}

QString duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("–");
  const auto s = static_cast<qint64>(std::llround(seconds));
  if (s >= 3600) return QString("%1h%2m").arg(s / 3600).arg(s % 3600 / 60, 2, 10, QChar('0'));
  if (s >= 60) return QString("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
  return QString("%1s").arg(s);
}

// "auto" means CUDA when this libtorch sees a GPU: jobs queue per resolved device.
QString device_key(const QString& device) {
  if (device == "auto") return torch::cuda::is_available() ? "cuda" : "cpu";
  return device;
}

// Name and memory of the first GPU, from nvidia-smi (libtorch's CPU builds cannot ask CUDA).
QString gpu_description() {
  QProcess smi;
  smi.start("nvidia-smi", {"--query-gpu=name,memory.total", "--format=csv,noheader"});
  if (!smi.waitForFinished(3000) || smi.exitCode() != 0) return {};
  return QString::fromUtf8(smi.readAllStandardOutput()).section('\n', 0, 0).trimmed();
}

}  // namespace

struct TrainingTab::Job {
  int id = 0;
  TrainingRequest request;
  JobState state = JobState::Queued;
  std::unique_ptr<TrainingProcess> process;
  TrainingHistory history;
  QStringList log;
  QString task;
  QString model_name;
  int step = 0;
  int total_steps = 0;
  double steps_per_s = 0.0;
  double eta_s = NAN;
  double validation_ll = NAN;
  bool has_checkpoint = false;
  bool use_in_explorer = false;
  QTreeWidgetItem* item = nullptr;
};

TrainingTab::TrainingTab(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  auto* scroll = new QScrollArea(splitter);
  scroll->setWidgetResizable(true);
  scroll->setWidget(buildForm());
  scroll->setMinimumWidth(330);
  splitter->addWidget(scroll);
  splitter->addWidget(buildJobView());
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter);
  refreshModels();
  updateSizeFields();
  updateJobView();
}

TrainingTab::~TrainingTab() = default;

QWidget* TrainingTab::buildForm() {
  auto* panel = new QWidget;
  auto* column = new QVBoxLayout(panel);
  auto* box = new QGroupBox(tr("New training job"), panel);
  m_form = new QFormLayout(box);
  m_task = new QComboBox(box);
  for (const auto& info : task_infos()) {
    m_task->addItem(from_utf8(info.name), from_utf8(info.name));
    m_task->setItemData(m_task->count() - 1, from_utf8(info.description), Qt::ToolTipRole);
  }
  m_model = new QComboBox(box);
  m_size = new QComboBox(box);
  m_size->addItem(tr("small (CPU, minutes)"), "small");
  m_size->addItem(tr("paper (Appendix F sizes; GPU)"), "paper");
  m_size->addItem(tr("custom widths"), "custom");
  auto spin = [box](int low, int high, int value, const QString& tip) {
    auto* s = new QSpinBox(box);
    s->setRange(low, high);
    s->setValue(value);
    s->setToolTip(tip);
    return s;
  };
  m_dim_model = spin(1, 4096, 64, tr("Token width D_z"));
  m_layers = spin(1, 64, 4, tr("Transformer / network layers L"));
  m_heads = spin(1, 64, 4, tr("Attention heads (must divide D_z)"));
  m_pseudo_tokens = spin(1, 4096, 32, tr("Pseudo-tokens M (PT-TNP, TE-PT-TNP)"));
  m_pseudo_tokens->setObjectName("pseudoTokens");
  m_steps = spin(1, 100000000, 2000, tr("Training steps"));
  m_batch = spin(1, 4096, 16, tr("Tasks per step"));
  m_learning_rate = new QDoubleSpinBox(box);
  m_learning_rate->setDecimals(6);
  m_learning_rate->setRange(0.000001, 1.0);
  m_learning_rate->setSingleStep(0.0001);
  m_learning_rate->setValue(5e-4);
  m_seed = spin(0, 1000000, 0, tr("Seed of the weights and the training tasks"));
  m_device = new QComboBox(box);
  m_device->addItem(tr("auto"), "auto");
  m_device->addItem(tr("CPU"), "cpu");
  const bool cuda = torch::cuda::is_available();
  const auto gpu = cuda ? gpu_description() : QString();
  m_device->addItem(cuda ? tr("CUDA — %1").arg(gpu.isEmpty() ? tr("GPU 0") : gpu) : tr("CUDA"),
                    "cuda");
  if (!cuda) {
    m_device->setItemData(2, tr("No CUDA GPU is available to this libtorch"), Qt::ToolTipRole);
  }
  m_device->setToolTip(cuda ? tr("auto trains on the GPU") : tr("No GPU: auto trains on the CPU"));
  m_output = new QLineEdit(box);
  auto* browse = new QPushButton(tr("…"), box);
  browse->setToolTip(tr("Choose the checkpoint file"));
  auto* output_row = new QHBoxLayout;
  output_row->addWidget(m_output, 1);
  output_row->addWidget(browse);
  m_checkpoint_every = spin(0, 10000000, 100, tr("Write the resumable checkpoint every N steps"));
  m_validation_every = spin(
      0, 10000000, 100, tr("Measure validation, shifted and equivariance metrics every N steps"));
  m_use_when_started = new QCheckBox(tr("Show in the explorer while it trains"), box);
  m_use_when_started->setChecked(true);

  m_form->addRow(tr("Task"), m_task);
  m_form->addRow(tr("Model"), m_model);
  m_form->addRow(tr("Size"), m_size);
  m_form->addRow(tr("D_z"), m_dim_model);
  m_form->addRow(tr("Layers"), m_layers);
  m_form->addRow(tr("Heads"), m_heads);
  m_form->addRow(tr("Pseudo-tokens M"), m_pseudo_tokens);
  m_form->addRow(tr("Steps"), m_steps);
  m_form->addRow(tr("Batch size"), m_batch);
  m_form->addRow(tr("Learning rate"), m_learning_rate);
  m_form->addRow(tr("Seed"), m_seed);
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
    refreshModels();
    if (m_output->text() == m_last_default_output) {
      m_last_default_output = defaultOutputPath();
      m_output->setText(m_last_default_output);
    }
  });
  connect(m_model, &QComboBox::currentIndexChanged, this, [this] {
    updateSizeFields();
    if (m_output->text() == m_last_default_output) {
      m_last_default_output = defaultOutputPath();
      m_output->setText(m_last_default_output);
    }
  });
  connect(m_size, &QComboBox::currentIndexChanged, this, [this] { updateSizeFields(); });
  connect(browse, &QPushButton::clicked, this, [this] {
    const auto path = QFileDialog::getSaveFileName(this, tr("Checkpoint file"), m_output->text(),
                                                   tr("Checkpoints (*.pt)"));
    if (!path.isEmpty()) m_output->setText(path);
  });
  connect(start, &QPushButton::clicked, this, [this] { submit(); });
  connect(open, &QPushButton::clicked, this, [this] {
    const auto path =
        QFileDialog::getOpenFileName(this, tr("Open training job"), {}, tr("Checkpoints (*.pt)"));
    if (path.isEmpty()) return;
    try {
      openJob(path);
    } catch (const Error& e) {
      m_message->setText(from_utf8(e.what()));
    }
  });
  m_last_default_output = defaultOutputPath();
  m_output->setText(m_last_default_output);
  return panel;
}

QWidget* TrainingTab::buildJobView() {
  auto* panel = new QWidget;
  auto* column = new QVBoxLayout(panel);
  m_queue = new QTreeWidget(panel);
  m_queue->setHeaderLabels(
      {tr("Job"), tr("Device"), tr("State"), tr("Step"), tr("Validation LL"), tr("Checkpoint")});
  m_queue->setRootIsDecorated(false);
  m_queue->setMaximumHeight(130);
  m_queue->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  column->addWidget(m_queue);
  auto* controls = new QHBoxLayout;
  m_pause = new QPushButton(tr("Pause"), panel);
  m_resume = new QPushButton(tr("Resume"), panel);
  m_stop = new QPushButton(tr("Stop"), panel);
  m_stop->setToolTip(tr("Stop after a final checkpoint (kept; Resume continues it)"));
  m_use = new QPushButton(tr("Use in explorer"), panel);
  m_use->setToolTip(
      tr("Show this model in the explorer tab of its task, refreshed at every "
         "checkpoint"));
  m_progress = new QProgressBar(panel);
  m_rate = new QLabel(panel);
  m_axis = new QComboBox(panel);
  m_axis->addItem(tr("against step"));
  m_axis->addItem(tr("against training time"));
  for (auto* w : {static_cast<QWidget*>(m_pause), static_cast<QWidget*>(m_resume),
                  static_cast<QWidget*>(m_stop), static_cast<QWidget*>(m_use)}) {
    controls->addWidget(w);
  }
  controls->addWidget(m_progress, 1);
  controls->addWidget(m_rate);
  controls->addWidget(m_axis);
  column->addLayout(controls);
  m_curves = new TrainingCurves(panel);
  column->addWidget(m_curves, 1);
  m_log = new QPlainTextEdit(panel);
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(2000);
  m_log->setMaximumHeight(110);
  m_log->setPlaceholderText(tr("Log of the selected job: set-up, checkpoints written, errors"));
  column->addWidget(m_log);

  connect(m_queue, &QTreeWidget::currentItemChanged, this, [this] { updateJobView(); });
  connect(m_pause, &QPushButton::clicked, this, [this] { pauseJob(selectedJob()); });
  connect(m_resume, &QPushButton::clicked, this, [this] { resumeJob(selectedJob()); });
  connect(m_stop, &QPushButton::clicked, this, [this] { stopJob(selectedJob()); });
  connect(m_use, &QPushButton::clicked, this, [this] { useInExplorer(selectedJob()); });
  connect(m_axis, &QComboBox::currentIndexChanged, this,
          [this](int index) { m_curves->setTimeAxis(index == 1); });
  return panel;
}

const TaskSource* TrainingTab::taskSource(const QString& name, QString* problem) {
  if (auto found = m_sources.find(name); found != m_sources.end()) return found->second.get();
  if (auto found = m_source_problems.find(name); found != m_source_problems.end()) {
    if (problem) *problem = found->second;
    return nullptr;
  }
  try {
    auto source = std::shared_ptr<const TaskSource>(make_task_source(name.toStdString()));
    return (m_sources[name] = source).get();
  } catch (const Error& e) {
    m_source_problems[name] = from_utf8(e.what());
    if (problem) *problem = from_utf8(e.what());
    return nullptr;
  }
}

QString TrainingTab::shiftLabel(const QString& task) {
  const auto* source = taskSource(task);
  if (!source) return {};
  QStringList parts;
  for (double v : source->out_of_range_translation()) parts << QString::number(v);
  return parts.size() == 1 ? "Δ = " + parts.front() : "Δ = (" + parts.join(", ") + ")";
}

void TrainingTab::refreshModels() {
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
    m_model->addItem(from_utf8(info.display_name), from_utf8(info.kind));
    m_model->setItemData(
        m_model->count() - 1,
        from_utf8(info.description) +
            (info.translation_equivariant ? tr(" Translation equivariant.") : QString()),
        Qt::ToolTipRole);
  }
  const int index = m_model->findData(previous.isEmpty() ? QString("tetnp") : previous);
  m_model->setCurrentIndex(std::max(0, index));
}

void TrainingTab::updateSizeFields() {
  // Custom widths: the fields the chosen kind has (a CNP has no layers or pseudo-tokens).
  const bool custom = m_size->currentData().toString() == "custom";
  const auto kind = m_model->currentData().toString();
  const std::pair<QWidget*, const char*> fields[] = {{m_dim_model, "dim_model"},
                                                     {m_layers, "num_layers"},
                                                     {m_heads, "num_heads"},
                                                     {m_pseudo_tokens, "num_pseudo_tokens"}};
  for (const auto& [field, option] : fields) {
    const bool shown = custom && modelHasOption(kind, option);
    field->setVisible(shown);
    if (auto* label = m_form->labelForField(field)) label->setVisible(shown);
  }
}

QString TrainingTab::defaultOutputPath() const {
  const auto folder =
      QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/training";
  return QString("%1/%2-%3-%4.pt")
      .arg(folder, m_model->currentData().toString(), m_task->currentData().toString(),
           QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss"));
}

TrainingRequest TrainingTab::formRequest() const {
  TrainingRequest r;
  r.task = m_task->currentData().toString();
  r.model = m_model->currentData().toString();
  r.size = m_size->currentData().toString();
  r.dim_model = m_dim_model->value();
  r.num_layers = m_layers->value();
  r.num_heads = m_heads->value();
  r.num_pseudo_tokens = m_pseudo_tokens->value();
  r.steps = m_steps->value();
  r.batch_size = m_batch->value();
  r.learning_rate = m_learning_rate->value();
  r.seed = m_seed->value();
  r.device = m_device->currentData().toString();
  r.output_path = m_output->text().trimmed();
  r.checkpoint_every = m_checkpoint_every->value();
  r.validation_every = m_validation_every->value();
  return r;
}

void TrainingTab::setFormRequest(const TrainingRequest& r) {
  m_task->setCurrentIndex(std::max(0, m_task->findData(r.task)));
  refreshModels();
  m_model->setCurrentIndex(std::max(0, m_model->findData(r.model)));
  m_size->setCurrentIndex(std::max(0, m_size->findData(r.size)));
  m_dim_model->setValue(r.dim_model);
  m_layers->setValue(r.num_layers);
  m_heads->setValue(r.num_heads);
  m_pseudo_tokens->setValue(r.num_pseudo_tokens);
  m_steps->setValue(r.steps);
  m_batch->setValue(r.batch_size);
  m_learning_rate->setValue(r.learning_rate);
  m_seed->setValue(r.seed);
  m_device->setCurrentIndex(std::max(0, m_device->findData(r.device)));
  m_output->setText(r.output_path);
  m_checkpoint_every->setValue(r.checkpoint_every);
  m_validation_every->setValue(r.validation_every);
  updateSizeFields();
}

QStringList TrainingTab::submit() {
  auto request = formRequest();
  for (const auto& job : m_jobs) {
    const bool active = job->state == JobState::Queued || job->state == JobState::Running ||
                        job->state == JobState::Paused;
    if (active && QFileInfo(job->request.output_path).absoluteFilePath() ==
                      QFileInfo(request.output_path).absoluteFilePath()) {
      m_message->setText(
          tr("Another job writes %1; choose another output file.").arg(request.output_path));
      return {m_message->text()};
    }
  }
  auto problems = validate_request(request);
  if (!problems.isEmpty()) {
    m_message->setText(problems.join('\n'));
    return problems;
  }
  if (npe_executable().isEmpty()) {
    m_message->setText(tr("Cannot find the npe program (set NPE_EXECUTABLE)."));
    return {m_message->text()};
  }
  m_message->clear();
  auto job = std::make_unique<Job>();
  job->id = m_next_id++;
  job->request = request;
  job->task = request.task;
  job->model_name = request.label();
  job->total_steps = request.steps;
  job->use_in_explorer = m_use_when_started->isChecked();
  job->item = new QTreeWidgetItem(m_queue);
  m_jobs.push_back(std::move(job));
  auto& added = *m_jobs.back();
  updateJobRow(added);
  m_queue->setCurrentItem(added.item);
  // The next job gets a fresh default file name.
  if (request.output_path == m_last_default_output) {
    m_last_default_output = defaultOutputPath();
    if (m_last_default_output == request.output_path) m_last_default_output.replace(".pt", "-2.pt");
    m_output->setText(m_last_default_output);
  }
  Q_EMIT statusMessage(tr("Queued %1").arg(added.model_name));
  scheduleJobs();
  return {};
}

void TrainingTab::openJob(const QString& checkpoint_path) {
  const auto path = QFileInfo(checkpoint_path).absoluteFilePath();
  auto loaded = TrainingJob::resume(path.toStdString());
  auto job = std::make_unique<Job>();
  job->id = m_next_id++;
  job->request.resume_path = path;
  job->request.output_path = path;
  job->request.device = "auto";
  job->request.steps = static_cast<int>(loaded->total_steps());
  job->task = from_utf8(loaded->source().name());
  job->model_name = from_utf8(model_info(loaded->spec().model.kind).display_name) + " · " +
                    job->task + " · " + QFileInfo(path).fileName();
  job->step = static_cast<int>(loaded->step());
  job->total_steps = static_cast<int>(loaded->total_steps());
  job->has_checkpoint = true;
  for (const auto& record : loaded->history()) {
    auto event = QJsonObject::fromVariantMap({});
    const auto json = record.to_json();
    event["event"] = "validation";
    for (const auto& [key, value] : json.items()) {
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
  job->item = new QTreeWidgetItem(m_queue);
  m_jobs.push_back(std::move(job));
  updateJobRow(*m_jobs.back());
  m_queue->setCurrentItem(m_jobs.back()->item);
  updateJobView();
}

void TrainingTab::scheduleJobs() {
  for (auto& job : m_jobs) {
    if (job->state != JobState::Queued) continue;
    const auto key = device_key(job->request.device);
    bool busy = false;
    for (const auto& other : m_jobs) {
      busy = busy || ((other->state == JobState::Running || other->state == JobState::Paused) &&
                      device_key(other->request.device) == key);
    }
    if (!busy) startJob(*job);
  }
}

void TrainingTab::startJob(Job& job) {
  job.process = std::make_unique<TrainingProcess>();
  connect(job.process.get(), &TrainingProcess::event, this,
          [this, &job](const QJsonObject& e) { onEvent(job, e); });
  connect(job.process.get(), &TrainingProcess::logLine, this,
          [this, &job](const QString& line) { appendLog(job, line); });
  connect(job.process.get(), &TrainingProcess::ended, this,
          [this, &job](bool completed, bool stopped, const QString& failure) {
            onEnded(job, completed, stopped, failure);
          });
  const auto program = npe_executable();
  appendLog(job, "$ npe " + job.request.arguments().join(' '));
  setState(job, JobState::Running);
  job.process->start(program, job.request.arguments());
}

void TrainingTab::onEvent(Job& job, const QJsonObject& event) {
  const auto kind = event.value("event").toString();
  job.history.add(event);
  if (kind == "start") {
    job.step = event.value("step").toInt();
    job.total_steps = event.value("total_steps").toInt();
    job.task = event.value("task").toString();
    appendLog(job, tr("Started %1 on %2 (%3 parameters, %4), step %5 of %6")
                       .arg(event.value("model_name").toString(), job.task)
                       .arg(event.value("parameters").toInteger())
                       .arg(event.value("device").toString())
                       .arg(job.step)
                       .arg(job.total_steps));
  } else if (kind == "progress") {
    job.step = event.value("step").toInt();
    job.steps_per_s = event.value("steps_per_s").toDouble();
    job.eta_s = event.value("eta_s").isDouble() ? event.value("eta_s").toDouble() : NAN;
  } else if (kind == "validation") {
    if (event.value("val_ll").isDouble()) job.validation_ll = event.value("val_ll").toDouble();
  } else if (kind == "checkpoint") {
    job.has_checkpoint = true;
    // Progress events are throttled: the checkpoint's step is the latest one (after a stop, the
    // step the job will resume from).
    job.step = std::max(job.step, event.value("step").toInt());
    appendLog(job, tr("Checkpoint at step %1: %2")
                       .arg(event.value("step").toInt())
                       .arg(event.value("path").toString()));
    if (job.use_in_explorer) Q_EMIT checkpointForExplorer(job.request.output_path);
  } else if (kind == "finished") {
    // A stop saves its checkpoint after the last progress report: this is the step it holds.
    job.step = event.value("step").toInt(job.step);
  } else if (kind == "paused") {
    setState(job, JobState::Paused);
  } else if (kind == "resumed") {
    setState(job, JobState::Running);
  } else if (kind == "error") {
    appendLog(job, tr("Error: %1").arg(event.value("message").toString()));
  }
  updateJobRow(job);
  if (&job == selected()) updateJobView();
}

void TrainingTab::onEnded(Job& job, bool completed, bool stopped, const QString& failure) {
  if (!failure.isEmpty()) appendLog(job, tr("Failed: %1").arg(failure));
  if (stopped) {
    appendLog(job, tr("Stopped at step %1; the checkpoint %2 is kept (Resume continues it)")
                       .arg(job.step)
                       .arg(job.request.output_path));
  }
  if (completed) appendLog(job, tr("Finished: %1 steps").arg(job.step));
  setState(job, completed ? JobState::Finished : stopped ? JobState::Stopped : JobState::Failed);
  // Further runs of this job continue its checkpoint.
  if (job.has_checkpoint || QFileInfo::exists(job.request.output_path)) {
    job.request.resume_path = job.request.output_path;
  }
  Q_EMIT statusMessage(tr("%1: %2").arg(job.model_name, state_text(job.state)));
  // Deleting the process inside its own signal is unsafe: later.
  if (job.process) job.process.release()->deleteLater();
  scheduleJobs();
}

void TrainingTab::setState(Job& job, JobState state) {
  job.state = state;
  updateJobRow(job);
  if (&job == selected()) updateJobView();
  Q_EMIT jobStateChanged(indexOf(job), state);
}

void TrainingTab::updateJobRow(Job& job) {
  if (!job.item) return;
  job.item->setText(0, QString("#%1 %2").arg(job.id).arg(job.model_name));
  job.item->setText(1, device_key(job.request.device).toUpper());
  job.item->setText(2, state_text(job.state));
  job.item->setText(3, QString("%1 / %2").arg(job.step).arg(job.total_steps));
  job.item->setText(4, std::isfinite(job.validation_ll) ? QString::number(job.validation_ll, 'f', 3)
                                                        : QStringLiteral("–"));
  job.item->setText(5, QFileInfo(job.request.output_path).fileName());
  job.item->setToolTip(5, job.request.output_path);
}

void TrainingTab::updateJobView() {
  const auto* job = selected();
  const bool running = job && job->state == JobState::Running;
  const bool paused = job && job->state == JobState::Paused;
  m_pause->setEnabled(running);
  m_resume->setEnabled(job && (paused || job->state == JobState::Stopped ||
                               (job->state == JobState::Failed && job->has_checkpoint)));
  m_stop->setEnabled(running || paused || (job && job->state == JobState::Queued));
  m_use->setEnabled(job != nullptr);
  m_use->setText(job && job->use_in_explorer ? tr("In explorer ✓") : tr("Use in explorer"));
  m_progress->setMaximum(job ? std::max(1, job->total_steps) : 1);
  m_progress->setValue(job ? std::min(job->step, job->total_steps) : 0);
  // "0 / 1" with no job selected read as a job of one step.
  m_progress->setFormat(job ? QStringLiteral("%v / %m") : QString());
  m_rate->setText(job && running ? tr("%1 steps/s · ETA %2")
                                       .arg(job->steps_per_s, 0, 'f', 1)
                                       .arg(duration_text(job->eta_s))
                  : job ? state_text(job->state)
                        : tr("no job"));
  m_curves->show(job ? &job->history : nullptr, job ? shiftLabel(job->task) : QString());
  const auto text = job ? job->log.join('\n') : QString();
  if (m_log->toPlainText() != text) {
    m_log->setPlainText(text);
    m_log->moveCursor(QTextCursor::End);
  }
}

void TrainingTab::appendLog(Job& job, const QString& line) {
  job.log << line;
  if (&job == selected()) {
    m_log->appendPlainText(line);
  }
}

int TrainingTab::indexOf(const Job& job) const {
  for (size_t i = 0; i < m_jobs.size(); ++i) {
    if (m_jobs[i].get() == &job) return static_cast<int>(i);
  }
  return -1;
}

TrainingTab::Job* TrainingTab::selected() const {
  const auto* item = m_queue->currentItem();
  for (const auto& job : m_jobs) {
    if (job->item == item) return job.get();
  }
  return nullptr;
}

TrainingTab::JobState TrainingTab::jobState(int index) const {
  return m_jobs.at(static_cast<size_t>(index))->state;
}

int TrainingTab::jobStep(int index) const {
  return m_jobs.at(static_cast<size_t>(index))->step;
}

const TrainingHistory& TrainingTab::jobHistory(int index) const {
  return m_jobs.at(static_cast<size_t>(index))->history;
}

QString TrainingTab::jobCheckpoint(int index) const {
  return m_jobs.at(static_cast<size_t>(index))->request.output_path;
}

void TrainingTab::selectJob(int index) {
  if (index >= 0 && index < jobCount()) m_queue->setCurrentItem(m_jobs[size_t(index)]->item);
}

int TrainingTab::selectedJob() const {
  const auto* job = selected();
  return job ? indexOf(*job) : -1;
}

void TrainingTab::pauseJob(int index) {
  if (index < 0 || index >= jobCount()) return;
  auto& job = *m_jobs[size_t(index)];
  if (job.state == JobState::Running && job.process) job.process->pause();
}

void TrainingTab::resumeJob(int index) {
  if (index < 0 || index >= jobCount()) return;
  auto& job = *m_jobs[size_t(index)];
  if (job.state == JobState::Paused && job.process) {
    job.process->resume();
  } else if (job.state == JobState::Stopped || job.state == JobState::Failed) {
    // A new process continues the checkpoint (npe train --resume).
    job.request.resume_path = job.request.output_path;
    job.request.steps = std::max(job.total_steps, job.step);
    setState(job, JobState::Queued);
    scheduleJobs();
  }
}

void TrainingTab::stopJob(int index) {
  if (index < 0 || index >= jobCount()) return;
  auto& job = *m_jobs[size_t(index)];
  if (job.state == JobState::Queued) {
    setState(job, JobState::Stopped);
  } else if (job.process) {
    appendLog(job, tr("Stopping after a final checkpoint…"));
    job.process->stop();
  }
}

void TrainingTab::useInExplorer(int index) {
  if (index < 0 || index >= jobCount()) return;
  auto& job = *m_jobs[size_t(index)];
  job.use_in_explorer = true;
  if (job.has_checkpoint)
    Q_EMIT checkpointForExplorer(job.request.output_path);
  else
    Q_EMIT statusMessage(
        tr("%1 appears in the explorer at its first checkpoint").arg(job.model_name));
  updateJobView();
}

bool TrainingTab::hasActiveJobs() const {
  for (const auto& job : m_jobs) {
    if (job->state == JobState::Running || job->state == JobState::Paused) return true;
  }
  return false;
}

void TrainingTab::stopAllAndWait() {
  for (auto& job : m_jobs) {
    if (job->state == JobState::Queued) job->state = JobState::Stopped;
  }
  for (auto& job : m_jobs) {
    if (job->process && job->process->isRunning()) job->process->stopAndWait();
  }
}

}  // namespace npe::widgets
