#pragma once
// The maps tab's small maps beside the big one: the truth over the target window, then a row
// per shown model with its mean and standard deviation, on shared colour scales, growing with
// the window.

#include <vector>

#include <QString>
#include <QWidget>

#include <torch/types.h>

class QGridLayout;
class QLabel;

namespace npe::widgets {

class PixelView;

class SmallMaps final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(SmallMaps)

 public:
  struct Model {
    QString name;
    torch::Tensor mean;    ///< [w, w], °C; NaN: no data
    torch::Tensor stddev;  ///< [w, w], K
  };

  explicit SmallMaps(QWidget* parent = nullptr);
  /// Shows the truth ([w, w], °C) and the models' maps; no truth (undefined) shows nothing.
  /// `truth_hidden` (an episode runs): the truth's picture is blank and its range unused.
  /// The same number of models as before updates the pictures and captions in place (each
  /// delivery of predictions calls this; new widgets cost a layout pass and a repaint of all).
  void show(const torch::Tensor& truth, const std::vector<Model>& models,
            bool truth_hidden = false);

 private:
  struct Cell {
    QLabel* caption = nullptr;
    PixelView* view = nullptr;
  };
  Cell addCell(int row, int column);
  void clear();

  QGridLayout* m_layout = nullptr;
  std::vector<Cell> m_cells;  ///< the truth, then each model's mean and σ
  QLabel* m_legend = nullptr;
};

/// Extremes over the finite values (cells without data are NaN); `fallback` when there are none.
double finite_min(const torch::Tensor& t, double fallback);
double finite_max(const torch::Tensor& t, double fallback);

}  // namespace npe::widgets
