#include "function_plot.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <QFileInfo>
#include <QIODevice>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>

#include "common/export.h"
#include "function1d/data_axis_ticker.h"
#include "npe/errors.h"

namespace npe::widgets {
namespace {
constexpr double kHitRadiusPixels = 10.0;
constexpr std::chrono::milliseconds kEditFrame{30};
}  // namespace

FunctionPlot::FunctionPlot(QWidget* parent) : QCustomPlot(parent) {
  m_replot_timer.setSingleShot(true);
  connect(&m_replot_timer, &QTimer::timeout, this, [this] { replot(); });
  setInteractions(QCP::iRangeZoom);
  axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  xAxis->setLabel("x");
  yAxis->setLabel("y");
  // Plain numbers with enough digits that ticks near x = 1e6 (large typed shifts) stay distinct.
  xAxis->setNumberFormat("g");
  xAxis->setNumberPrecision(9);
  xAxis->setRange(-4, 4);
  yAxis->setRange(-3, 3);
  legend->setVisible(true);
  legend->setFont(QFont(font().family(), 8));
  legend->setBrush(QColor(255, 255, 255, 210));
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

  m_training_band = new QCPItemRect(this);
  m_training_band->setLayer("grid");
  m_training_band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_training_band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_training_band->setPen(Qt::NoPen);
  m_training_band->setBrush(QColor(255, 200, 60, 45));
  m_training_label = new QCPItemText(this);
  m_training_label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_training_label->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
  m_training_label->setText(tr("training range"));
  m_training_label->setColor(QColor(150, 110, 20));
  setTrainingRange(-2, 2);

  auto target_line = [this] {
    auto* line = new QCPItemStraightLine(this);
    line->setPen(QPen(QColor(120, 120, 120), 1, Qt::DotLine));
    return line;
  };
  m_target_low = target_line();
  m_target_high = target_line();
  setTargetWindow(-3, 3);

  m_truth = addGraph();
  m_truth->setName(tr("true function"));
  m_truth->setPen(QPen(QColor(60, 60, 60), 1.5, Qt::DashLine));

  // The correlation overlay lives on the right-hand axis, shown only while it is drawn.
  yAxis2->setRange(-1.05, 1.05);
  yAxis2->setLabel(tr("predictive correlation"));
  m_correlation = addGraph(xAxis, yAxis2);
  m_correlation->setVisible(false);
  m_correlation->removeFromLegend();
  m_correlation_marker = new QCPItemStraightLine(this);
  m_correlation_marker->setVisible(false);

  m_points = addGraph();
  m_points->setName(tr("context"));
  m_points->setLineStyle(QCPGraph::lsNone);
  m_points->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 1.5), QColor(255, 255, 255), 9));
}

void FunctionPlot::scheduleReplot(std::chrono::milliseconds within) {
  // One pending replot, at the earliest time anyone asked for.
  if (m_replot_timer.isActive() && m_replot_timer.remainingTimeAsDuration() <= within) return;
  m_replot_timer.start(within);
}

void FunctionPlot::replotNow() {
  m_replot_timer.stop();
  replot(QCustomPlot::rpImmediateRefresh);
}

void FunctionPlot::setContextPoints(const std::vector<QPointF>& points) {
  m_context = points;
  QVector<double> x, y;
  for (const auto& p : points) {
    x.push_back(p.x());
    y.push_back(p.y());
  }
  // Keep insertion order (the data are not a function of x), hence no sorting.
  m_points->setData(x, y, true);
  // Within a frame, not at once: an edit's new curves usually follow within it and are drawn in
  // the same replot. Drawing the moved point alone first made the GUI thread and the display
  // server compete with the models for the two cores during every edit.
  scheduleReplot(kEditFrame);
}

void FunctionPlot::setTruth(const QVector<double>& x, const QVector<double>& y) {
  m_truth->setData(x, y, true);
  scheduleReplot();
}

void FunctionPlot::setTruthName(const QString& name) {
  m_truth->setName(name);
  scheduleReplot();
}

void FunctionPlot::setDataAxes(const std::optional<DataAxes>& axes) {
  if (axes) {
    xAxis->setTicker(QSharedPointer<DataAxisTicker>::create(axes->x_scale, axes->x_offset,
                                                            axes->x_is_time, axes->time_origin));
    yAxis->setTicker(QSharedPointer<DataAxisTicker>::create(axes->y_scale, axes->y_offset));
    xAxis->setLabel(axes->x_label);
    yAxis->setLabel(axes->y_label);
  } else {
    xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    xAxis->setLabel("x");
    yAxis->setLabel("y");
  }
  scheduleReplot();
}

void FunctionPlot::setTruthVisible(bool visible) {
  m_truth->setVisible(visible);
  if (visible) {
    m_truth->addToLegend();
  } else {
    m_truth->removeFromLegend();
  }
  scheduleReplot();
}

void FunctionPlot::setQuickDrawing(bool quick) {
  // Only the curves, bands and points: axes, grid and text cost little antialiased, and text
  // drawn without antialiasing needs glyphs of its own (the first quick frame took 22 ms to
  // draw instead of 8 while they were made).
  setNotAntialiasedElements(quick ? QCP::aePlottables | QCP::aeFills | QCP::aeScatters
                                  : QCP::aeNone);
  // Curves as separate segments, without the joins a 2-pixel polyline needs (the stroker's
  // atan2 per vertex showed in the GUI thread's profile).
  setPlottingHint(QCP::phFastPolylines, quick);
}

void FunctionPlot::setModelCurve(const QString& id, const QString& name, const QColor& colour,
                                 const QVector<double>& x, const QVector<double>& mean,
                                 const QVector<double>& stddev) {
  auto it = m_curves.find(id);
  if (it == m_curves.end()) {
    Curve curve{addGraph(), addGraph(), addGraph(), colour, false};
    curve.upper->setChannelFillGraph(curve.lower);
    // Antialiasing a translucent band's edges cost most of a repaint (software rendering) for a
    // difference hard to see at this opacity.
    curve.upper->setAntialiasedFill(false);
    curve.lower->removeFromLegend();
    curve.upper->removeFromLegend();
    it = m_curves.emplace(id, curve).first;
    applyEmphasis();
  } else if (it->second.colour != colour) {
    it->second.colour = colour;
    applyEmphasis();
  }
  QVector<double> lower(x.size()), upper(x.size());
  for (int i = 0; i < x.size(); ++i) {
    lower[i] = mean[i] - 2 * stddev[i];
    upper[i] = mean[i] + 2 * stddev[i];
  }
  it->second.mean->setName(name);
  it->second.lower->setData(x, lower, true);
  it->second.upper->setData(x, upper, true);
  it->second.mean->setData(x, mean, true);
  // Points on top of every curve.
  m_points->setLayer("main");
  scheduleReplot();
}

void FunctionPlot::setModelUpdating(const QString& id, bool updating) {
  auto it = m_curves.find(id);
  if (it == m_curves.end() || it->second.updating == updating) return;
  it->second.updating = updating;
  applyEmphasis();
  scheduleReplot();
}

void FunctionPlot::removeModelCurve(const QString& id) {
  auto it = m_curves.find(id);
  if (it == m_curves.end()) return;
  removeGraph(it->second.lower);
  removeGraph(it->second.upper);
  removeGraph(it->second.mean);
  m_curves.erase(it);
  if (m_mouse_model == id) m_mouse_model.clear();
  applyEmphasis();
  scheduleReplot();
}

void FunctionPlot::setBands(Bands bands) {
  m_bands = bands;
  applyEmphasis();
  scheduleReplot();
}

void FunctionPlot::setSelectedModel(const QString& id) {
  m_selected_model = id;
  applyEmphasis();
  scheduleReplot();
}

void FunctionPlot::setHoveredModel(const QString& id) {
  if (m_hovered_model == id) return;
  m_hovered_model = id;
  applyEmphasis();
  scheduleReplot();
}

QString FunctionPlot::focusedModel() const {
  if (m_curves.count(m_hovered_model)) return m_hovered_model;
  if (m_curves.count(m_selected_model)) return m_selected_model;
  return {};
}

bool FunctionPlot::bandVisible(const QString& id) const {
  auto it = m_curves.find(id);
  return it != m_curves.end() && it->second.upper->visible();
}

void FunctionPlot::applyEmphasis() {
  const QString focus = focusedModel();
  for (auto& [id, curve] : m_curves) {
    const bool focused = id == focus;
    const bool band = m_bands == Bands::all || (m_bands == Bands::focused && focused);
    curve.lower->setVisible(band);
    curve.upper->setVisible(band);
    // With every band drawn, thin outlines in the model's colour say which band is whose; the
    // focused band alone can be filled more strongly.
    // A curve whose new prediction is still computing is drawn at a third of its opacity.
    const double fade = curve.updating ? 0.35 : 1.0;
    QColor fill = curve.colour, edge = curve.colour, line = curve.colour;
    fill.setAlpha(int((m_bands == Bands::all && !focused ? 18 : 40) * fade));
    edge.setAlpha(int((m_bands == Bands::all ? 170 : 110) * fade));
    line.setAlpha(int(255 * fade));
    const QPen outline(edge, 1, m_bands == Bands::all && !focused ? Qt::DashLine : Qt::SolidLine);
    curve.lower->setPen(outline);
    curve.upper->setPen(outline);
    curve.upper->setBrush(fill);
    // The focused mean is thicker and drawn over the others (the graphs are drawn in order).
    curve.mean->setPen(QPen(line, focused ? 3.2 : 1.8));
    if (focused) {  // appended: drawn last, over the other models
      curve.lower->setLayer("main");
      curve.upper->setLayer("main");
      curve.mean->setLayer("main");
    }
    if (auto* item = legend->itemWithPlottable(curve.mean)) {
      QFont font = legend->font();
      font.setBold(focused && !focus.isEmpty() && m_curves.size() > 1);
      item->setFont(font);
    }
  }
  // Context points stay on top of every curve.
  m_points->setLayer("main");
}

QString FunctionPlot::modelAt(const QPointF& pixel) const {
  for (int i = 0; i < legend->itemCount(); ++i) {
    auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
    if (!item || !item->visible() || !item->outerRect().contains(pixel.toPoint())) continue;
    for (const auto& [id, curve] : m_curves) {
      if (item->plottable() == curve.mean) return id;
    }
    return {};
  }
  if (!axisRect()->rect().contains(pixel.toPoint())) return {};
  QString nearest;
  double best = 6.0;  // pixels
  for (const auto& [id, curve] : m_curves) {
    const double distance = curve.mean->selectTest(pixel, false);
    if (distance >= 0 && distance < best) {
      best = distance;
      nearest = id;
    }
  }
  return nearest;
}

void FunctionPlot::setModelSamples(const QString& id, const QColor& colour,
                                   const QVector<double>& x,
                                   const std::vector<QVector<double>>& samples) {
  auto& lines = m_samples[id];
  while (lines.size() > samples.size()) {
    removeGraph(lines.back());
    lines.pop_back();
  }
  QColor thin = colour;
  thin.setAlpha(150);
  while (lines.size() < samples.size()) {
    auto* graph = addGraph();
    graph->setPen(QPen(thin, 1));
    graph->removeFromLegend();
    lines.push_back(graph);
  }
  for (size_t k = 0; k < samples.size(); ++k) lines[k]->setData(x, samples[k], true);
  m_points->setLayer("main");
  scheduleReplot();
}

void FunctionPlot::removeModelSamples(const QString& id) {
  auto it = m_samples.find(id);
  if (it == m_samples.end()) return;
  for (auto* graph : it->second) removeGraph(graph);
  m_samples.erase(it);
  scheduleReplot();
}

int FunctionPlot::sampleLineCount(const QString& id) const {
  auto it = m_samples.find(id);
  return it == m_samples.end() ? 0 : static_cast<int>(it->second.size());
}

QVector<double> FunctionPlot::sampleLine(const QString& id, int k, QVector<double>* x) const {
  QVector<double> values;
  auto it = m_samples.find(id);
  if (it == m_samples.end() || k < 0 || k >= int(it->second.size())) return values;
  for (auto point = it->second[size_t(k)]->data()->constBegin();
       point != it->second[size_t(k)]->data()->constEnd(); ++point) {
    values.push_back(point->value);
    if (x) x->push_back(point->key);
  }
  return values;
}

void FunctionPlot::setCorrelation(double x0, const QColor& colour, const QString& label,
                                  const QVector<double>& x, const QVector<double>& correlation) {
  m_correlation->setPen(QPen(colour, 2, Qt::DashDotLine));
  m_correlation->setName(label);
  m_correlation->setData(x, correlation, true);
  if (!m_correlation->visible()) m_correlation->addToLegend();
  m_correlation->setVisible(true);
  m_correlation_marker->setPen(QPen(colour, 1, Qt::DotLine));
  m_correlation_marker->point1->setCoords(x0, 0);
  m_correlation_marker->point2->setCoords(x0, 1);
  m_correlation_marker->setVisible(true);
  yAxis2->setVisible(true);
  scheduleReplot();
}

void FunctionPlot::clearCorrelation() {
  if (!m_correlation->visible()) return;
  m_correlation->setVisible(false);
  m_correlation->removeFromLegend();
  m_correlation_marker->setVisible(false);
  yAxis2->setVisible(false);
  scheduleReplot();
}

bool FunctionPlot::hasCorrelation() const {
  return m_correlation->visible();
}

void FunctionPlot::setAcquisition(const QVector<double>& x, const QVector<double>& score,
                                  double best_x, const QColor& colour, const QString& label) {
  if (!m_acquisition_rect) {
    m_acquisition_rect = new QCPAxisRect(this);
    plotLayout()->addElement(1, 0, m_acquisition_rect);
    plotLayout()->setRowStretchFactor(0, 4.0);
    plotLayout()->setRowStretchFactor(1, 1.0);
    plotLayout()->setRowSpacing(0);
    // Left and right edges aligned with the plot's, whatever the widths of the tick labels.
    auto* margins = new QCPMarginGroup(this);
    axisRect()->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    m_acquisition_rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    auto* strip_x = m_acquisition_rect->axis(QCPAxis::atBottom);
    auto* strip_y = m_acquisition_rect->axis(QCPAxis::atLeft);
    strip_x->setNumberFormat("g");
    strip_x->setNumberPrecision(9);
    strip_x->setRange(xAxis->range());
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), strip_x,
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    strip_y->setLabel(tr("score"));
    strip_y->setTicker(QSharedPointer<QCPAxisTickerFixed>::create());
    strip_y->ticker()->setTickCount(2);
    m_acquisition = addGraph(strip_x, strip_y);
    m_acquisition->removeFromLegend();
    m_acquisition->setBrush(Qt::NoBrush);
    auto marker = [this](QCPAxisRect* rect) {
      auto* line = new QCPItemStraightLine(this);
      line->setClipAxisRect(rect);
      line->point1->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
      line->point2->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
      line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
      line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
      line->point1->setAxisRect(rect);
      line->point2->setAxisRect(rect);
      return line;
    };
    m_proposal_marker = marker(axisRect());
    m_proposal_marker_strip = marker(m_acquisition_rect);
    m_proposal_label = new QCPItemText(this);
    m_proposal_label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_proposal_label->setPositionAlignment(Qt::AlignBottom | Qt::AlignLeft);
    m_proposal_label->setPadding(QMargins(4, 0, 0, 2));
  }
  m_acquisition_colour = colour;
  m_acquisition->setData(x, score, true);
  auto* strip_y = m_acquisition_rect->axis(QCPAxis::atLeft);
  double high = 0.0;
  for (double v : score) {
    if (std::isfinite(v)) high = std::max(high, v);
  }
  strip_y->setRange(0.0, high > 0.0 ? 1.08 * high : 1.0);
  if (auto fixed = strip_y->ticker().dynamicCast<QCPAxisTickerFixed>()) {
    fixed->setTickStep(high > 0.0 ? std::pow(10.0, std::floor(std::log10(high))) : 0.5);
    fixed->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  }
  for (auto* line : {m_proposal_marker, m_proposal_marker_strip}) {
    line->point1->setCoords(best_x, 0);
    line->point2->setCoords(best_x, 1);
  }
  m_proposal_label->position->setCoords(best_x, 0.99);
  m_proposal_label->setText(label);
  setAcquisitionStale(false);
}

void FunctionPlot::setAcquisitionStale(bool stale) {
  if (!m_acquisition_rect) return;
  QColor colour = m_acquisition_colour;
  if (stale) colour.setAlpha(90);
  m_acquisition->setPen(QPen(colour, 2));
  QColor fill = colour;
  fill.setAlpha(stale ? 20 : 50);
  m_acquisition->setBrush(fill);
  for (auto* line : {m_proposal_marker, m_proposal_marker_strip})
    line->setPen(QPen(colour, 1.5, Qt::DashLine));
  m_proposal_label->setColor(colour);
  scheduleReplot();
}

void FunctionPlot::clearAcquisition() {
  if (!m_acquisition_rect) return;
  removeItem(m_proposal_marker);
  removeItem(m_proposal_marker_strip);
  removeItem(m_proposal_label);
  removeGraph(m_acquisition);
  plotLayout()->remove(m_acquisition_rect);  // deletes it, and its axes
  plotLayout()->simplify();
  axisRect()->setMarginGroup(QCP::msLeft | QCP::msRight, nullptr);
  m_acquisition_rect = nullptr;
  m_acquisition = nullptr;
  m_proposal_marker = m_proposal_marker_strip = nullptr;
  m_proposal_label = nullptr;
  scheduleReplot();
}

QVector<double> FunctionPlot::acquisitionCurve(QVector<double>* x) const {
  QVector<double> score;
  if (!m_acquisition) return score;
  for (auto it = m_acquisition->data()->constBegin(); it != m_acquisition->data()->constEnd();
       ++it) {
    if (x) x->push_back(it->key);
    score.push_back(it->value);
  }
  return score;
}

void FunctionPlot::setTrainingRange(double low, double high) {
  m_training_band->topLeft->setCoords(low, 0);
  m_training_band->bottomRight->setCoords(high, 1);
  m_training_label->position->setCoords(0.5 * (low + high), 0.01);
}

void FunctionPlot::setTargetWindow(double low, double high) {
  m_target_low->point1->setCoords(low, 0);
  m_target_low->point2->setCoords(low, 1);
  m_target_high->point1->setCoords(high, 0);
  m_target_high->point2->setCoords(high, 1);
  scheduleReplot();
}

void FunctionPlot::setAttention(double x, double y, const std::vector<double>& weights) {
  clearAttention();
  const double largest = weights.empty() ? 1.0 : *std::max_element(weights.begin(), weights.end());
  for (size_t i = 0; i < weights.size() && i < m_context.size(); ++i) {
    const double relative = largest > 0 ? weights[i] / largest : 0.0;
    if (relative < 0.02) continue;
    auto* line = new QCPItemLine(this);
    line->start->setCoords(x, y);
    line->end->setCoords(m_context[i]);
    line->setPen(
        QPen(QColor(200, 30, 120, static_cast<int>(40 + 200 * relative)), 1.0 + 7.0 * relative));
    m_attention_lines.push_back(line);
  }
  scheduleReplot();
}

void FunctionPlot::clearAttention() {
  for (auto* line : m_attention_lines) removeItem(line);
  m_attention_lines.clear();
  scheduleReplot();
}

QPointF FunctionPlot::toPixel(const QPointF& point) const {
  return {xAxis->coordToPixel(point.x()), yAxis->coordToPixel(point.y())};
}

QPointF FunctionPlot::toCoords(const QPointF& pixel) const {
  return {xAxis->pixelToCoord(pixel.x()), yAxis->pixelToCoord(pixel.y())};
}

int FunctionPlot::pointAt(const QPointF& pixel) const {
  int best = -1;
  double best_distance = kHitRadiusPixels;
  for (size_t i = 0; i < m_context.size(); ++i) {
    const auto d = toPixel(m_context[i]) - pixel;
    const double distance = std::hypot(d.x(), d.y());
    if (distance <= best_distance) {
      best_distance = distance;
      best = static_cast<int>(i);
    }
  }
  return best;
}

void FunctionPlot::mousePressEvent(QMouseEvent* event) {
  setFocus();
  const QPointF pixel = event->position();
  if (!axisRect()->rect().contains(pixel.toPoint())) {
    QCustomPlot::mousePressEvent(event);
    return;
  }
  if (event->button() == Qt::LeftButton) {
    m_drag_index = pointAt(pixel);
    ++m_drag_id;
    if (m_drag_index < 0) Q_EMIT addRequested(toCoords(pixel));
  } else if (event->button() == Qt::RightButton) {
    const int index = pointAt(pixel);
    if (index >= 0) Q_EMIT removeRequested(index);
  } else if (event->button() == Qt::MiddleButton) {
    m_panning = true;
    m_pan_start = pixel;
    m_pan_x = xAxis->range();
    m_pan_y = yAxis->range();
  }
  event->accept();
}

void FunctionPlot::mouseMoveEvent(QMouseEvent* event) {
  const QPointF pixel = event->position();
  if (m_drag_index >= 0 && (event->buttons() & Qt::LeftButton)) {
    Q_EMIT moveRequested(m_drag_index, toCoords(pixel), m_drag_id);
  } else if (m_panning) {
    const double dx = xAxis->pixelToCoord(m_pan_start.x()) - xAxis->pixelToCoord(pixel.x());
    const double dy = yAxis->pixelToCoord(m_pan_start.y()) - yAxis->pixelToCoord(pixel.y());
    xAxis->setRange(m_pan_x.lower + dx, m_pan_x.upper + dx);
    yAxis->setRange(m_pan_y.lower + dy, m_pan_y.upper + dy);
    scheduleReplot();
    Q_EMIT viewChangedByUser();
  } else {
    m_hover_index = pointAt(pixel);
    setCursor(m_hover_index >= 0 ? Qt::OpenHandCursor : Qt::CrossCursor);
    const QString model = m_hover_index >= 0 ? QString() : modelAt(pixel);
    if (model != m_mouse_model) {
      m_mouse_model = model;
      Q_EMIT modelHovered(model);
    }
    if (axisRect()->rect().contains(pixel.toPoint()))
      Q_EMIT hovered(xAxis->pixelToCoord(pixel.x()));
  }
  event->accept();
}

void FunctionPlot::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) m_drag_index = -1;
  if (event->button() == Qt::MiddleButton) m_panning = false;
  event->accept();
}

void FunctionPlot::wheelEvent(QWheelEvent* event) {
  QCustomPlot::wheelEvent(event);
  Q_EMIT viewChangedByUser();
}

void FunctionPlot::keyPressEvent(QKeyEvent* event) {
  if ((event->key() == Qt::Key_Delete || event->key() == Qt::Key_Backspace) && m_hover_index >= 0 &&
      m_hover_index < static_cast<int>(m_context.size())) {
    Q_EMIT removeRequested(m_hover_index);
    m_hover_index = -1;
    event->accept();
    return;
  }
  QCustomPlot::keyPressEvent(event);
}

void FunctionPlot::leaveEvent(QEvent* event) {
  m_hover_index = -1;
  if (!m_mouse_model.isEmpty()) {
    m_mouse_model.clear();
    Q_EMIT modelHovered({});
  }
  Q_EMIT hoverEnded();
  QCustomPlot::leaveEvent(event);
}

void FunctionPlot::exportTo(const QString& path) {
  const auto suffix = QFileInfo(path).suffix().toLower();
  if (suffix != "png" && suffix != "pdf" && suffix != "svg") {
    throw Error(("cannot export to '" + path + "': use .png, .pdf or .svg").toStdString());
  }
  // Vector graphics for PDF and SVG, as QCustomPlot's savePdf draws them, but into memory:
  // savePdf writes to a file and reports no failed write.
  write_encoded_atomically(path, [&](QIODevice& device) {
    if (suffix == "png") return toPixmap(0, 0, 2.0).save(&device, "PNG");
    QCPPainter painter;
    std::unique_ptr<QPaintDevice> target;
    if (suffix == "pdf") {
      auto writer = std::make_unique<QPdfWriter>(&device);
      writer->setPageSize(QPageSize(size(), QPageSize::Point));
      writer->setPageMargins({0, 0, 0, 0});
      writer->setResolution(72);
      writer->setCreator(tr("NP Explorer"));
      target = std::move(writer);
    } else {
      auto generator = std::make_unique<QSvgGenerator>();
      generator->setOutputDevice(&device);
      generator->setSize(size());
      generator->setViewBox(rect());
      generator->setTitle(tr("NP Explorer plot"));
      target = std::move(generator);
    }
    if (!painter.begin(target.get())) return false;
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    toPainter(&painter, width(), height());
    return painter.end();
  });
}

}  // namespace npe::widgets
