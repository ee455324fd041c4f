#pragma once
// The 1-D plot's correlation curve: a joint model's predictive correlation between y at the
// hovered x and y everywhere else, from the newest correlation matrix each model sent.

#include <limits>
#include <map>
#include <utility>
#include <vector>

#include <QString>

#include <torch/types.h>

namespace npe::widgets {

class FunctionPlot;
class ModelList;
struct ModelPrediction;

class CorrelationOverlay {
 public:
  explicit CorrelationOverlay(FunctionPlot* plot) : m_plot(plot) {}

  /// Keeps the correlation a round's prediction carries. TNP-A's estimate arrives on refined
  /// rounds only: its last one stays meanwhile, unless the model is not joint or none is shown.
  void keep(const ModelPrediction& prediction, bool joint, bool shown);
  /// The points the correlations are at (a round's sample_x), when the round has them.
  void setPoints(const torch::Tensor& sample_x);
  /// Forgets every correlation (none is shown).
  void clear() { m_correlations.clear(); }
  /// The mouse is at x (NaN: off the plot).
  void hover(double x) { m_hover_x = x; }
  /// Draws the correlation of model `id` (empty: none) at the hovered x, or clears the curve.
  void show(const QString& id, const ModelList& models);

 private:
  FunctionPlot* m_plot;
  std::map<QString, std::pair<torch::Tensor, bool>> m_correlations;  // matrix, estimated
  std::vector<double> m_points;
  double m_hover_x = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace npe::widgets
