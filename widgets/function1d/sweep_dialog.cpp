#include "sweep_dialog.h"

#include <cmath>

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QVBoxLayout>
#include "common/custom_plot.h"

#include "npe/data/gp_tasks.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/training/evaluation.h"

namespace npe::widgets {

SweepDialog::SweepDialog(std::vector<ModelEntry> models, QWidget* parent, int tasks)
    : QDialog(parent), m_models(std::move(models)), m_tasks(tasks) {
  setWindowTitle(tr("Δ sweep: log-likelihood against shift"));
  resize(640, 460);
  for (int i = 0; i <= 12; ++i) m_shifts.push_back(0.25 * i);
  m_results.assign(m_models.size(),
                   std::vector<double>(m_shifts.size(), std::numeric_limits<double>::quiet_NaN()));
  m_plot = new QCustomPlot(this);
  m_plot->xAxis->setLabel(tr("shift Δ"));
  m_plot->yAxis->setLabel(tr("mean log-likelihood per target"));
  m_plot->xAxis->setRange(0, 3);
  m_plot->yAxis->setRange(-1.5, 0.5);
  m_plot->legend->setVisible(true);
  for (const auto& m : m_models) {
    auto* graph = m_plot->addGraph();
    graph->setName(m.name);
    graph->setPen(QPen(m.colour, 2));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
  }
  m_progress = new QProgressBar(this);
  m_progress->setRange(0, static_cast<int>(m_models.size() * m_shifts.size()));
  m_status =
      new QLabel(tr("%1 GP tasks per shift, seed 2024, paired across shifts").arg(tasks), this);
  m_cancel = new QPushButton(tr("Cancel"), this);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_plot, 1);
  layout->addWidget(m_status);
  layout->addWidget(m_progress);
  layout->addWidget(m_cancel);
  connect(this, &SweepDialog::resultReady, this, &SweepDialog::onResult, Qt::QueuedConnection);
  connect(this, &SweepDialog::workDone, this, &SweepDialog::onDone, Qt::QueuedConnection);
  connect(m_cancel, &QPushButton::clicked, this, [this] {
    if (m_thread && m_thread->isRunning()) {
      m_cancelled = true;
      m_status->setText(tr("Cancelling…"));
    } else {
      close();
    }
  });
}

SweepDialog::~SweepDialog() {
  m_cancelled = true;
  if (m_thread) m_thread->wait();
}

void SweepDialog::start() {
  auto models = m_models;
  auto shifts = m_shifts;
  const int tasks = m_tasks;
  m_thread = QThread::create([this, models, shifts, tasks] {
    QString error;
    try {
      GpTaskGenerator generator;
      for (size_t m = 0; m < models.size() && !m_cancelled; ++m) {
        // Predictors of its own: the explorer's copies stay with its worker thread. Neural
        // models are loaded afresh; fitted GPs use 100 iterations to keep the sweep short.
        std::unique_ptr<Predictor> predictor;
        if (models[m].capabilities.trainable) {
          predictor = load_predictor(models[m].checkpoint_path.toStdString());
        } else {
          PredictorOptions options;
          options.fitted.iterations = 100;
          predictor = make_predictor(models[m].id.toStdString(), options);
        }
        for (size_t s = 0; s < shifts.size() && !m_cancelled; ++s) {
          EvalOptions options;
          options.num_tasks = tasks;
          options.seed = 2024;
          options.shift = {shifts[s]};
          auto result = evaluate(*predictor, generator, options,
                                 [this](const Progress&) { return !m_cancelled.load(); });
          if (result.cancelled) break;
          Q_EMIT resultReady(int(m), int(s), result.ll_mean);
        }
      }
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    Q_EMIT workDone(error);
  });
  m_thread->setParent(this);
  m_thread->start();
}

void SweepDialog::onResult(int model, int shift, double ll) {
  m_results[model][shift] = ll;
  QVector<double> x, y;
  double low = 0, high = -1e9;
  for (size_t s = 0; s < m_shifts.size(); ++s) {
    if (!std::isfinite(m_results[model][s])) continue;
    x.push_back(m_shifts[s]);
    y.push_back(m_results[model][s]);
  }
  m_plot->graph(model)->setData(x, y, true);
  for (const auto& row : m_results) {
    for (double v : row) {
      if (std::isfinite(v)) {
        low = std::min(low, v);
        high = std::max(high, v);
      }
    }
  }
  m_plot->yAxis->setRange(std::max(low - 0.1, -5.0), high + 0.1);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
  m_progress->setValue(m_progress->value() + 1);
}

void SweepDialog::onDone(const QString& error) {
  if (!error.isEmpty()) {
    m_status->setText(tr("Stopped: %1").arg(error));
  } else {
    m_status->setText(m_cancelled ? tr("Cancelled") : tr("Done: %1 tasks per shift").arg(m_tasks));
    // Completed: the bar says so, whatever the rounding of the per-result increments.
    if (!m_cancelled) m_progress->setValue(m_progress->maximum());
  }
  m_cancel->setText(tr("Close"));
  Q_EMIT finished();
}

}  // namespace npe::widgets
