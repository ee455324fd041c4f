#pragma once
// One row per shown model: its predictive mean and standard deviation as images, on shared
// colour scales with colour bars; hovering any image highlights that pixel everywhere.

#include <vector>

#include <QLabel>
#include <QWidget>

#include <torch/types.h>

class QGridLayout;

namespace npe::widgets {

class ColourBar;
class PixelView;

class PredictionGrid final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(PredictionGrid)

 public:
  explicit PredictionGrid(QWidget* parent = nullptr);

  struct Row {
    QString id, name, status;  ///< status: "" or e.g. "computing…", an error
    QColor colour;
    /// [side, side] grey or [side, side, 3] colour; undefined while unknown.
    torch::Tensor mean, stddev;
  };
  /// Replaces the rows. Grey means use the grey scale on [0, 1] (the data's range), colour means
  /// are drawn as pictures; standard deviations (for colour, the mean of the channels') share
  /// one scale from 0 to the largest shown.
  void setRows(std::vector<Row> rows);
  void setHighlight(int row, int column);
  int rowCount() const { return static_cast<int>(m_rows.size()); }
  /// The text beside row i (model name and any note); for tests.
  QString rowText(int i) const;
  double stddevScale() const;
  /// The widest this grid may be for every row to fit into `height` pixels, its pictures square
  /// (down to their minimum size: below that, its scroll area scrolls).
  int widthShowingEveryRow(int height) const;

 Q_SIGNALS:
  void hovered(int row, int column);

 private:
  void rebuild();

  std::vector<Row> m_rows;
  QGridLayout* m_layout = nullptr;
  std::vector<QWidget*> m_cells;
  std::vector<PixelView*> m_views;
  ColourBar* m_mean_bar = nullptr;
  ColourBar* m_std_bar = nullptr;
  QLabel* m_std_title = nullptr;
};

}  // namespace npe::widgets
