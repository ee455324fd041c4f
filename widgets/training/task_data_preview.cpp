#include "training/task_data_preview.h"

#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QVBoxLayout>

#include "common/custom_plot.h"
#include "npe/data/image_tasks.h"
#include "npe/data/picture_tasks.h"
#include "npe/data/series_tasks.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"

namespace npe::widgets {

struct TaskDataPreview::Reading {
  QString task;
  nlohmann::json options;
  std::shared_ptr<const TaskSource> source;
  QString problem;
};

TaskDataPreview::TaskDataPreview(QWidget* parent) : QWidget(parent) {
  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  m_summary = new QLabel(this);
  m_summary->setObjectName("dataSummary");
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Wrapped to the form's width, never widening it (a long path would add a scroll bar).
  m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_summary->setMinimumWidth(200);
  m_plot = new QCustomPlot(this);
  m_plot->setObjectName("exampleTask");
  m_plot->setMinimumSize(200, 170);
  m_plot->setMaximumHeight(210);
  m_plot->addGraph();  // targets
  m_plot->addGraph();  // context
  m_plot->graph(0)->setLineStyle(QCPGraph::lsNone);
  m_plot->graph(0)->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(150, 150, 150), 4));
  m_plot->graph(0)->setName(tr("targets"));
  m_plot->graph(1)->setLineStyle(QCPGraph::lsNone);
  m_plot->graph(1)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, Qt::black, 6));
  m_plot->graph(1)->setName(tr("context"));
  m_plot->legend->setVisible(true);
  auto small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  m_plot->legend->setFont(small);
  m_plot->legend->setBrush(QColor(255, 255, 255, 200));  // the points show through
  m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
  m_plot->hide();
  m_picture = new QLabel(this);
  m_picture->setObjectName("examplePicture");
  m_picture->hide();
  column->addWidget(m_summary);
  column->addWidget(m_plot);
  column->addWidget(m_picture);
}

TaskDataPreview::~TaskDataPreview() {
  if (m_worker.joinable()) m_worker.join();
}

QString TaskDataPreview::summary() const {
  return m_summary->text();
}

void TaskDataPreview::showTask(const QString& task, const nlohmann::json& options) {
  m_task = task;
  m_options = options;
  m_source.reset();
  if (task.isEmpty()) {
    m_pending = false;  // a reading in progress is no longer wanted
    if (m_busy) return;
    m_summary->setStyleSheet({});
    m_summary->setText(
        options.value("kind", "") == "pictures"
            ? tr("Choose your pictures: a folder of PNG or JPEG files (sub-folders too), an IDX "
                 "file or the folder of CIFAR-10's binary batches. They are brought to one "
                 "size and moved on a canvas twice as large.")
            : tr("Choose your file: a series as CSV, TSV or whitespace-separated text "
                 "with a header line (x as numbers or dates, then one or more y "
                 "columns)."));
    m_plot->hide();
    m_picture->hide();
    return;
  }
  if (m_busy) {
    m_pending = true;
    return;
  }
  start();
}

void TaskDataPreview::start() {
  if (m_worker.joinable()) m_worker.join();  // the last one has delivered: it is done
  m_busy = true;
  m_pending = false;
  m_summary->setStyleSheet({});
  m_summary->setText(tr("Reading…"));
  auto reading = std::make_shared<Reading>();
  reading->task = m_task;
  reading->options = m_options;
  // The destructor joins this thread, so `this` outlives every queued delivery it makes.
  m_worker = std::thread([this, reading] {
    try {
      reading->source = make_task_source(reading->task.toStdString(), reading->options);
    } catch (const Error& e) {
      reading->problem = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
      reading->problem = tr("Cannot read the data: %1").arg(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, reading] { finish(reading); }, Qt::QueuedConnection);
  });
}

void TaskDataPreview::finish(const std::shared_ptr<Reading>& reading) {
  m_busy = false;
  if (m_pending) {
    start();
    return;
  }
  if (m_task.isEmpty() || reading->task != m_task) {
    showTask(m_task, m_options);  // the settings were cleared while it read
    return;
  }
  if (!reading->source) {
    m_summary->setStyleSheet("color: #b00020");
    m_summary->setText(reading->problem);
    m_plot->hide();
    m_picture->hide();
    Q_EMIT shown(false, reading->problem);
    return;
  }
  m_source = reading->source;
  auto text = QString::fromStdString(m_source->describe());
  if (text.isEmpty()) {
    text = tr("%1: inputs D_x = %2, outputs D_y = %3.")
               .arg(QString::fromStdString(m_source->name()))
               .arg(m_source->dim_x())
               .arg(m_source->dim_y());
  }
  m_plot->hide();
  m_picture->hide();
  if (const auto* series = dynamic_cast<const SeriesTaskSource*>(m_source.get())) {
    drawExample(*series);
  } else if (const auto* pictures = dynamic_cast<const PictureTaskSource*>(m_source.get())) {
    drawExample(*pictures);
  }
  m_summary->setText(text);
  Q_EMIT shown(true, text);
}

void TaskDataPreview::drawExample(const PictureTaskSource& pictures) {
  // One training task as the model sees it: the picture moved on its canvas, and its context
  // pixels (the others in a muted blue, as the Images tab draws what is hidden).
  const auto& c = pictures.config();
  if (!pictures.pictures(Split::Train).defined()) return;  // describe() says the split is empty
  auto shape = CanvasTaskShape{};
  shape.canvas = c.canvas;
  shape.max_translation = c.train_max_translation;
  shape.min_context_fraction = shape.max_context_fraction = 0.2;
  const auto task = sample_canvas_tasks(pictures.pictures(Split::Train), shape, 1, 0, {}).task;
  const int side = static_cast<int>(c.canvas);
  const int64_t channels = pictures.dim_y();
  const int64_t half = c.canvas / 2;
  QImage whole(side, side, QImage::Format_RGB32);
  QImage context(side, side, QImage::Format_RGB32);
  context.fill(QColor(70, 90, 130));
  const auto paint = [&](QImage& image, const torch::Tensor& x, const torch::Tensor& y) {
    // Accessors, not item(): a 1024 x 1024 canvas is a million pixels on the GUI thread.
    const auto xs = x[0].to(torch::kLong).contiguous();
    const auto ys = (y[0] * 255).round().clamp(0, 255).to(torch::kInt).contiguous();
    const auto xa = xs.accessor<int64_t, 2>();
    const auto ya = ys.accessor<int, 2>();
    for (int64_t i = 0; i < xa.size(0); ++i) {
      const int row = static_cast<int>(xa[i][0] + half);
      const int col = static_cast<int>(xa[i][1] + half);
      const int r = ya[i][0];
      const int g = channels == 3 ? ya[i][1] : r;
      const int b = channels == 3 ? ya[i][2] : r;
      image.setPixel(col, row, qRgb(r, g, b));
    }
  };
  paint(whole, task.xt, task.yt);
  paint(whole, task.xc, task.yc);
  paint(context, task.xc, task.yc);
  const int scale = std::max(1, 160 / side);
  const int shown = side * scale;
  QImage both(2 * shown + 8, shown, QImage::Format_RGB32);
  both.fill(palette().window().color());
  QPainter painter(&both);
  painter.drawImage(QRect(0, 0, shown, shown), whole);
  painter.drawImage(QRect(shown + 8, 0, shown, shown), context);
  painter.end();
  m_picture->setPixmap(QPixmap::fromImage(both));
  m_picture->setToolTip(tr("An example task: the picture on its %1 x %1 canvas, and the 20% of "
                           "its pixels given as context")
                            .arg(side));
  m_picture->show();
}

void TaskDataPreview::drawExample(const SeriesTaskSource& source) {
  const auto* series = &source;
  const auto task = series->sample(1, 0).task;
  const auto& config = series->config();
  // In the data's units: x from the window's centre (hours for date-times), the first output.
  const auto fill = [&](QCPGraph* graph, const torch::Tensor& x, const torch::Tensor& y) {
    QVector<double> xs, ys;
    const auto xa = x.to(torch::kFloat64).contiguous();
    const auto ya = y.to(torch::kFloat64).contiguous();
    for (int64_t i = 0; i < xa.size(1); ++i) {
      xs << xa[0][i][0].item<double>() * config.x_scale;
      ys << series->from_model_y(ya[0][i][0].item<double>(), 0);
    }
    graph->setData(xs, ys);
  };
  fill(m_plot->graph(0), task.xt, task.yt);
  fill(m_plot->graph(1), task.xc, task.yc);
  const auto& data = series->data();
  m_plot->xAxis->setLabel(
      data.x_is_time ? tr("hours from the window's centre")
                     : tr("%1 from the window's centre").arg(QString::fromStdString(data.x_name)));
  const auto first = QString::fromStdString(data.y_names.front());
  m_plot->yAxis->setLabel(data.y_names.size() == 1
                              ? first
                              : tr("%1 (first of %2 outputs)").arg(first).arg(data.y_names.size()));
  m_plot->rescaleAxes();
  m_plot->yAxis->scaleRange(1.15);
  m_plot->show();
  m_plot->replot();
}

}  // namespace npe::widgets
