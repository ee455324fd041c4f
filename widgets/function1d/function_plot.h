#pragma once
// QCustomPlot view of the 1-D explorer: context points that can be added, dragged and removed
// with the mouse, model means with ±2σ bands, the true function, and the training range.

#include <chrono>
#include <map>
#include <optional>
#include <vector>

#include <QTimer>

#include "common/custom_plot.h"
#include "function1d/series_truth.h"

namespace npe::widgets {

class FunctionPlot final : public QCustomPlot {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(FunctionPlot)

 public:
  /// Which models' ±2σ bands are drawn. Four translucent bands over each other read as one
  /// haze, so by default only the model in focus (hovered, else selected) has its band; the
  /// others show their means.
  enum class Bands { focused, all, none };

  explicit FunctionPlot(QWidget* parent = nullptr);

  /// Writes the plot as PNG (twice the screen resolution), PDF or SVG (vector graphics), by
  /// suffix, atomically. Throws npe::Error.
  void exportTo(const QString& path);

  /// Replots within `within` (0: at the next pass of the event loop), once however often it is
  /// asked before then. (QCustomPlot's own queued replot cannot be withdrawn: after an immediate
  /// replot it still fired and drew the same picture again, 10 ms of two cores' time per edit.)
  void scheduleReplot(std::chrono::milliseconds within = std::chrono::milliseconds{0});
  /// Replots and repaints now; a scheduled replot is absorbed.
  void replotNow();

  /// Context points in display coordinates.
  void setContextPoints(const std::vector<QPointF>& points);
  void setTruth(const QVector<double>& x, const QVector<double>& y);
  void setTruthVisible(bool visible);
  /// The truth's legend text ("true function", or the series shown).
  void setTruthName(const QString& name);
  /// Axis ticks and titles in the data's units (a series model's data; the plot stays in model
  /// coordinates), or plain x and y without.
  void setDataAxes(const std::optional<DataAxes>& axes);
  /// Mean with a ±2σ band; replaces an existing curve with the same id.
  void setModelCurve(const QString& id, const QString& name, const QColor& colour,
                     const QVector<double>& x, const QVector<double>& mean,
                     const QVector<double>& stddev);
  void removeModelCurve(const QString& id);
  /// Marks a model's curve as its previous prediction, shown faded until the new one arrives
  /// (prediction rounds deliver each model as it finishes).
  void setModelUpdating(const QString& id, bool updating);
  void setBands(Bands bands);
  Bands bands() const { return m_bands; }
  /// The model selected in the tab's list: in focus whenever no model is hovered.
  void setSelectedModel(const QString& id);
  /// The model under the mouse (in the plot, its legend or the tab's list); empty for none.
  void setHoveredModel(const QString& id);
  /// The model in focus: the hovered one, else the selected one (empty when neither is shown).
  QString focusedModel() const;
  /// Whether a model's band is drawn now (for tests).
  bool bandVisible(const QString& id) const;
  /// While the user edits (quick prediction rounds): draw without antialiasing, which halves a
  /// software-rendered repaint; the settled round draws antialiased again.
  void setQuickDrawing(bool quick);
  /// Coherent function samples of a model as thin lines in its colour (one per row of
  /// `samples`, at x); replaces the model's earlier samples.
  void setModelSamples(const QString& id, const QColor& colour, const QVector<double>& x,
                       const std::vector<QVector<double>>& samples);
  void removeModelSamples(const QString& id);
  int sampleLineCount(const QString& id) const;
  /// The k-th sample line of a model: its values, and its x in `x` when given.
  QVector<double> sampleLine(const QString& id, int k, QVector<double>* x = nullptr) const;
  /// A row of a model's predictive correlation matrix, corr(y(x0), y(x)), on the right-hand
  /// axis (-1 to 1), with a marker at x0.
  void setCorrelation(double x0, const QColor& colour, const QString& label,
                      const QVector<double>& x, const QVector<double>& correlation);
  void clearCorrelation();
  bool hasCorrelation() const;
  /// The shaded band of the models' training context range, in absolute coordinates.
  void setTrainingRange(double low, double high);
  /// The target window (dotted lines), in display coordinates.
  void setTargetWindow(double low, double high);
  /// Where to observe next: a model's acquisition score over x in a strip under the plot (its
  /// own axis, sharing x), and a marker at the proposal `best_x` on both. `label` names the
  /// model and the score; `stale` draws it faded while a newer one is computed.
  void setAcquisition(const QVector<double>& x, const QVector<double>& score, double best_x,
                      const QColor& colour, const QString& label);
  void setAcquisitionStale(bool stale);
  void clearAcquisition();
  bool hasAcquisition() const { return m_acquisition_rect != nullptr; }
  /// The strip's curve (tests): x and score; empty when none is shown.
  QVector<double> acquisitionCurve(QVector<double>* x = nullptr) const;
  /// Lines from (x, y) to each context point, width and opacity proportional to weight.
  void setAttention(double x, double y, const std::vector<double>& weights);
  void clearAttention();

  bool hasCurve(const QString& id) const { return m_curves.count(id) > 0; }
  /// Index of the context point within a few pixels of `pixel`, or -1.
  int pointAt(const QPointF& pixel) const;
  /// Pixel position of a point given in display coordinates (for tests and tooltips).
  QPointF toPixel(const QPointF& point) const;
  QPointF toCoords(const QPointF& pixel) const;

 Q_SIGNALS:
  void addRequested(QPointF point);
  /// A drag in progress; all moves of one drag share drag_id.
  void moveRequested(int index, QPointF point, int drag_id);
  void removeRequested(int index);
  void hovered(double x);
  /// The model whose mean curve or legend entry is under the mouse changed (empty: none).
  void modelHovered(const QString& id);
  /// The mouse left the plot.
  void hoverEnded();
  /// The user zoomed or panned.
  void viewChangedByUser();

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  struct Curve {
    QCPGraph* lower;
    QCPGraph* upper;
    QCPGraph* mean;
    QColor colour;
    bool updating = false;
  };

  /// Bands, mean widths and legend fonts for the current focus and band mode.
  void applyEmphasis();
  /// The model whose mean (within a few pixels) or legend entry is at `pixel`, or empty.
  QString modelAt(const QPointF& pixel) const;

  QCPGraph* m_points = nullptr;
  QCPGraph* m_truth = nullptr;
  QCPItemRect* m_training_band = nullptr;
  QCPItemText* m_training_label = nullptr;
  QCPItemStraightLine* m_target_low = nullptr;
  QCPItemStraightLine* m_target_high = nullptr;
  std::map<QString, Curve> m_curves;
  std::map<QString, std::vector<QCPGraph*>> m_samples;
  QCPGraph* m_correlation = nullptr;
  QCPItemStraightLine* m_correlation_marker = nullptr;
  std::vector<QCPItemLine*> m_attention_lines;
  QCPAxisRect* m_acquisition_rect = nullptr;  // the strip under the plot, while shown
  QCPGraph* m_acquisition = nullptr;
  QCPItemStraightLine* m_proposal_marker = nullptr;
  QCPItemStraightLine* m_proposal_marker_strip = nullptr;
  QCPItemText* m_proposal_label = nullptr;
  QColor m_acquisition_colour;
  std::vector<QPointF> m_context;

  int m_drag_index = -1;
  int m_drag_id = 0;
  int m_hover_index = -1;
  Bands m_bands = Bands::focused;
  QString m_selected_model, m_hovered_model, m_mouse_model;
  bool m_panning = false;
  QPointF m_pan_start;
  QCPRange m_pan_x, m_pan_y;
  QTimer m_replot_timer;
};

}  // namespace npe::widgets
