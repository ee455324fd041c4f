#include "training/training_curves.h"

#include <cmath>

#include <QVBoxLayout>

#include "common/custom_plot.h"

namespace npe::widgets {
namespace {

enum Graph { kLoss, kValidation, kShifted, kEquivariance };

// The equivariance error of an exactly equivariant model is 0 up to rounding: drawn at this
// floor so that it stays on the log axis.
constexpr double kLogFloor = 1e-9;

}  // namespace

void TrainingHistory::add(const QJsonObject& event) {
  const auto kind = event.value("event").toString();
  const double step = event.value("step").toDouble();
  const double time = event.value("wall_time_s").toDouble();
  auto push = [&](std::vector<Point>& curve, const char* key, bool log, const char* error_key) {
    const auto value = event.value(QLatin1String(key));
    if (!value.isDouble() || !std::isfinite(value.toDouble())) return;
    const auto error = error_key ? event.value(QLatin1String(error_key)).toDouble() : 0.0;
    curve.push_back({step, time, log ? std::max(value.toDouble(), kLogFloor) : value.toDouble(),
                     std::isfinite(error) ? error : 0.0});
  };
  if (kind == "progress") {
    push(loss, "smoothed_loss", false, nullptr);
  } else if (kind == "validation") {
    push(validation_ll, "val_ll", false, "val_ll_stderr");
    push(shifted_ll, "shifted_ll", false, "shifted_ll_stderr");
    push(equivariance_error, "equivariance_error", true, nullptr);
  }
}

void TrainingHistory::clear() {
  loss.clear();
  validation_ll.clear();
  shifted_ll.clear();
  equivariance_error.clear();
}

TrainingCurves::TrainingCurves(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_plot = new QCustomPlot(this);
  m_plot->setMinimumHeight(320);
  layout->addWidget(m_plot);
  m_plot->plotLayout()->clear();
  // Short axis titles: the rows are low, longer ones are cut.
  const QStringList titles = {tr("training loss"), tr("log-likelihood"), tr("equivariance error")};
  auto* group = new QCPMarginGroup(m_plot);
  for (int row = 0; row < titles.size(); ++row) {
    auto* rect = new QCPAxisRect(m_plot);
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    rect->axis(QCPAxis::atLeft)->setLabel(titles[row]);
    m_plot->plotLayout()->addElement(row, 0, rect);
    m_rects.push_back(rect);
  }
  auto add_graph = [&](QCPAxisRect* rect, const QColor& colour, bool scatter) {
    auto* graph = m_plot->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    graph->setPen(QPen(colour, 2));
    if (scatter) graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    m_graphs.push_back(graph);
  };
  add_graph(m_rects[0], QColor(31, 119, 180), false);
  add_graph(m_rects[1], QColor(44, 160, 44), true);
  add_graph(m_rects[1], QColor(214, 39, 40), true);
  // Dashed: for an equivariant model it lies exactly on the validation curve.
  m_graphs.back()->setPen(QPen(QColor(214, 39, 40), 2, Qt::DashLine));
  add_graph(m_rects[2], QColor(148, 103, 189), true);
  for (auto graph : {kValidation, kShifted}) {
    auto* bars = new QCPErrorBars(m_graphs[graph]->keyAxis(), m_graphs[graph]->valueAxis());
    bars->setDataPlottable(m_graphs[graph]);
    bars->setPen(m_graphs[graph]->pen().color());
    bars->removeFromLegend();
    m_error_bars.push_back(bars);
  }
  m_graphs[kLoss]->setName(tr("training loss"));
  m_graphs[kValidation]->setName(tr("validation (± s.e.)"));
  auto* legend = new QCPLegend;
  m_rects[1]->insetLayout()->addElement(legend, Qt::AlignBottom | Qt::AlignRight);
  legend->setLayer(QLatin1String("legend"));
  legend->addItem(new QCPPlottableLegendItem(legend, m_graphs[kValidation]));
  legend->addItem(new QCPPlottableLegendItem(legend, m_graphs[kShifted]));
  auto* log_axis = m_rects[2]->axis(QCPAxis::atLeft);
  log_axis->setScaleType(QCPAxis::stLogarithmic);
  auto ticker = QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog);
  ticker->setSubTickCount(0);
  log_axis->setTicker(ticker);
  log_axis->setNumberFormat("eb");
  log_axis->setNumberPrecision(0);
  setTimeAxis(false);
}

void TrainingCurves::setTimeAxis(bool time) {
  m_time_axis = time;
  m_rects.back()->axis(QCPAxis::atBottom)->setLabel(time ? tr("training time (s)") : tr("step"));
  show(m_history, m_shift_label);
}

void TrainingCurves::show(const TrainingHistory* history, const QString& shift_label) {
  m_history = history;
  m_shift_label = shift_label;
  m_graphs[kShifted]->setName(shift_label.isEmpty() ? tr("shifted")
                                                    : tr("shifted by %1").arg(shift_label));
  const std::vector<TrainingHistory::Point>* curves[] = {
      history ? &history->loss : nullptr, history ? &history->validation_ll : nullptr,
      history ? &history->shifted_ll : nullptr, history ? &history->equivariance_error : nullptr};
  for (size_t i = 0; i < m_graphs.size(); ++i) {
    QVector<double> x, y, errors;
    if (curves[i]) {
      for (const auto& p : *curves[i]) {
        x << (m_time_axis ? p.wall_time_s : p.step);
        y << p.value;
        errors << p.error;
      }
    }
    m_graphs[i]->setData(x, y, true);
    if (i == kValidation || i == kShifted) m_error_bars[i - kValidation]->setData(errors);
  }
  for (auto* rect : m_rects) {
    bool found = false;
    QCPRange x_range, y_range;
    for (auto* graph : rect->graphs()) {
      bool ok = false;
      const auto xr = graph->getKeyRange(ok);
      if (!ok) continue;
      const auto yr = graph->getValueRange(ok);
      x_range = found
                    ? QCPRange(std::min(x_range.lower, xr.lower), std::max(x_range.upper, xr.upper))
                    : xr;
      y_range = found
                    ? QCPRange(std::min(y_range.lower, yr.lower), std::max(y_range.upper, yr.upper))
                    : yr;
      found = true;
    }
    if (!found) continue;
    const double pad = std::max(1e-9, 0.05 * y_range.size());
    rect->axis(QCPAxis::atBottom)
        ->setRange(x_range.lower, std::max(x_range.upper, x_range.lower + 1.0));
    if (rect == m_rects.back()) {
      // Whole decades around the data, so that the log ticks are readable.
      rect->axis(QCPAxis::atLeft)
          ->setRange(std::pow(10.0, std::floor(std::log10(y_range.lower)) - 1.0),
                     std::pow(10.0, std::ceil(std::log10(y_range.upper)) + 1.0));
    } else {
      rect->axis(QCPAxis::atLeft)->setRange(y_range.lower - pad, y_range.upper + pad);
    }
  }
  // The x ranges of all rows follow the widest one, so the rows line up.
  QCPRange widest = m_rects[0]->axis(QCPAxis::atBottom)->range();
  for (auto* rect : m_rects) {
    const auto r = rect->axis(QCPAxis::atBottom)->range();
    widest = QCPRange(std::min(widest.lower, r.lower), std::max(widest.upper, r.upper));
  }
  for (auto* rect : m_rects) rect->axis(QCPAxis::atBottom)->setRange(widest);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int TrainingCurves::pointCount(int graph) const {
  return m_graphs.at(static_cast<size_t>(graph))->dataCount();
}

}  // namespace npe::widgets
