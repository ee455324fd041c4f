#pragma once
// The maps tab's small maps beside the big one: the truth over the target window, then a row
// per shown model with its mean and standard deviation, on shared colour scales, growing with
// the window.

#include <vector>

#include <QString>
#include <QWidget>

#include <torch/types.h>

class QGridLayout;

namespace npe::widgets {

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
  void show(const torch::Tensor& truth, const std::vector<Model>& models);

 private:
  QGridLayout* m_layout = nullptr;
};

/// Extremes over the finite values (cells without data are NaN); `fallback` when there are none.
double finite_min(const torch::Tensor& t, double fallback);
double finite_max(const torch::Tensor& t, double fallback);

}  // namespace npe::widgets
