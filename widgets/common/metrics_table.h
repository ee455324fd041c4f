#pragma once
// Per-model metrics of the latest prediction round: held-out log-likelihood, equivariance
// error, prediction time, and a "computing…" state while a model still runs.

#include <QTableWidget>

#include "common/model_list.h"
#include "common/prediction_service.h"

namespace npe::widgets {

class MetricsTable final : public QTableWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MetricsTable)

 public:
  /// `held_out_help` explains what the held-out points are in this tab.
  MetricsTable(const QString& held_out_help, QWidget* parent = nullptr);

  /// Shows the metrics of a round; models not in `models` are skipped.
  void showResult(const PredictionResult& result, const ModelList& models);
  /// Marks a model's row as computing (a busy indicator for slow models).
  void markComputing(const QString& id);
  /// Text of a cell of the row of model `id` (column 1 LL, 2 equivariance, 3 ms); for tests.
  QString cellText(const QString& id, int column) const;
  /// Log-likelihoods are shown plus `offset`, and the column's tooltip says what they are
  /// (`help`): a model's standardised outputs map to the data's units with y = mean + s * ŷ, and
  /// a density per point in those units is the standardised one minus log s. An empty help
  /// restores the tab's own and offset 0.
  void setLikelihoodUnits(double offset, const QString& help);

 private:
  /// At least as wide as every column's contents: a pane beside a map or a plot is never
  /// squeezed until a column is cut off behind a horizontal scroll bar.
  void fitWidthToColumns();

  QString m_held_out_help;
  double m_ll_offset = 0.0;
};

}  // namespace npe::widgets
