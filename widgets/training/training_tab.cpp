#include "training/training_tab.h"

#include <cmath>

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "npe/errors.h"
#include "training/training_form.h"

namespace npe::widgets {
namespace {

QString duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("–");
  const auto s = static_cast<qint64>(std::llround(seconds));
  if (s >= 3600) return QString("%1h%2m").arg(s / 3600).arg(s % 3600 / 60, 2, 10, QChar('0'));
  if (s >= 60) return QString("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
  return QString("%1s").arg(s);
}

}  // namespace

TrainingTab::TrainingTab(QWidget* parent) : QWidget(parent) {
  m_jobs = new TrainingQueue(this);
  m_form = new TrainingForm;
  auto* layout = new QHBoxLayout(this);
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  auto* scroll = new QScrollArea(splitter);
  scroll->setWidgetResizable(true);
  scroll->setWidget(m_form);
  scroll->setMinimumWidth(330);
  // The form scrolls down when it is taller than the tab (a data preview open at 1366 x 768),
  // never sideways: its fields take the width there is.
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_form->setMinimumWidth(300);
  splitter->addWidget(scroll);
  splitter->addWidget(buildJobView());
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter);

  connect(m_form, &TrainingForm::startRequested, this, [this] { submit(); });
  connect(m_form, &TrainingForm::openRequested, this, [this](const QString& path) {
    try {
      openJob(path);
    } catch (const Error& e) {
      m_form->showMessage(QString::fromUtf8(e.what()));
    }
  });
  connect(m_jobs, &TrainingQueue::jobAdded, this, &TrainingTab::addJobRow);
  connect(m_jobs, &TrainingQueue::jobChanged, this, [this](int index) {
    updateJobRow(index);
    if (index == selectedJob()) updateJobView();
  });
  connect(m_jobs, &TrainingQueue::logAppended, this, [this](int index, const QString& line) {
    if (index == selectedJob()) m_log->appendPlainText(line);
  });
  connect(m_jobs, &TrainingQueue::jobStateChanged, this, &TrainingTab::jobStateChanged);
  connect(m_jobs, &TrainingQueue::checkpointForExplorer, this, &TrainingTab::checkpointForExplorer);
  connect(m_jobs, &TrainingQueue::statusMessage, this, &TrainingTab::statusMessage);
  updateJobView();
}

TrainingTab::~TrainingTab() {
  // Jobs still running are killed as the queue goes: nothing they report reaches this view.
  disconnect(m_jobs, nullptr, this, nullptr);
}

TrainingRequest TrainingTab::formRequest() const {
  return m_form->request();
}

void TrainingTab::setFormRequest(const TrainingRequest& request) {
  m_form->setRequest(request);
}

QLabel* TrainingTab::formMessage() const {
  return m_form->message();
}

QStringList TrainingTab::submit() {
  const auto request = m_form->request();
  const auto problems = m_jobs->add(request, m_form->showInExplorer());
  m_form->showMessage(problems.join('\n'));
  if (problems.isEmpty()) m_form->outputUsed(request.output_path);
  return problems;
}

void TrainingTab::useOwnData(const QString& path) {
  m_form->useOwnData(path);
}

void TrainingTab::openJob(const QString& checkpoint_path) {
  m_jobs->open(checkpoint_path);
  updateJobView();
}

QWidget* TrainingTab::buildJobView() {
  auto* panel = new QWidget;
  auto* column = new QVBoxLayout(panel);
  m_list = new QTreeWidget(panel);
  m_list->setHeaderLabels({tr("Job"), tr("Host · device"), tr("State"), tr("Step"),
                           tr("Validation LL"), tr("Checkpoint")});
  m_list->setRootIsDecorated(false);
  m_list->setMaximumHeight(130);
  m_list->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  column->addWidget(m_list);
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

  connect(m_list, &QTreeWidget::currentItemChanged, this, [this] { updateJobView(); });
  connect(m_pause, &QPushButton::clicked, this, [this] { pauseJob(selectedJob()); });
  connect(m_resume, &QPushButton::clicked, this, [this] { resumeJob(selectedJob()); });
  connect(m_stop, &QPushButton::clicked, this, [this] { stopJob(selectedJob()); });
  connect(m_use, &QPushButton::clicked, this, [this] { useInExplorer(selectedJob()); });
  connect(m_axis, &QComboBox::currentIndexChanged, this,
          [this](int index) { m_curves->setTimeAxis(index == 1); });
  return panel;
}

void TrainingTab::addJobRow(int index) {
  new QTreeWidgetItem(m_list);
  updateJobRow(index);
  m_list->setCurrentItem(m_list->topLevelItem(index));
}

void TrainingTab::updateJobRow(int index) {
  auto* item = m_list->topLevelItem(index);
  if (!item) return;
  const auto& job = m_jobs->job(index);
  item->setText(0, QString("#%1 %2").arg(job.id).arg(job.model_name));
  // The host, then the device there ("auto" on an SSH host is the host's to resolve).
  const auto& host = job.request.host;
  const auto device =
      (host.remote() ? job.request.device : job_device(job.request.device)).toUpper();
  item->setText(
      1, host.kind == TrainingHost::Kind::ThisComputer ? device : host.name + " · " + device);
  item->setToolTip(1, host.label());
  item->setText(2, job_state_text(job.state));
  item->setText(3, QString("%1 / %2").arg(job.step).arg(job.total_steps));
  item->setText(4, std::isfinite(job.validation_ll) ? QString::number(job.validation_ll, 'f', 3)
                                                    : QStringLiteral("–"));
  item->setText(5, QFileInfo(job.request.output_path).fileName());
  item->setToolTip(5, job.request.output_path);
}

void TrainingTab::updateJobView() {
  const int selected = selectedJob();
  const auto* job = selected >= 0 ? &m_jobs->job(selected) : nullptr;
  const bool running = job && job->state == JobState::Running;
  const bool paused = job && job->state == JobState::Paused;
  m_pause->setEnabled(running);
  m_resume->setEnabled(job && (paused || job->state == JobState::Stopped ||
                               job->state == JobState::Disconnected ||
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
                  : job ? job_state_text(job->state)
                        : tr("no job"));
  m_curves->show(job ? &job->history : nullptr, job ? m_form->shiftLabel(job->task) : QString());
  const auto text = job ? job->log.join('\n') : QString();
  if (m_log->toPlainText() != text) {
    m_log->setPlainText(text);
    m_log->moveCursor(QTextCursor::End);
  }
}

void TrainingTab::selectJob(int index) {
  if (index >= 0 && index < jobCount()) m_list->setCurrentItem(m_list->topLevelItem(index));
}

int TrainingTab::selectedJob() const {
  auto* item = m_list->currentItem();
  return item ? m_list->indexOfTopLevelItem(item) : -1;
}

}  // namespace npe::widgets
