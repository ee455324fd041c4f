#include "function1d/correlation_overlay.h"

#include <cmath>

#include <QObject>

#include "common/model_list.h"
#include "common/prediction_service.h"
#include "function1d/function_plot.h"
#include "function1d/tensor_values.h"

namespace npe::widgets {
void CorrelationOverlay::keep(const ModelPrediction& prediction, bool joint, bool shown) {
  if (prediction.correlation.defined()) {
    m_correlations[prediction.id] = {prediction.correlation, prediction.correlation_estimated};
  } else if (!shown || !joint) {
    m_correlations.erase(prediction.id);
  }
}

void CorrelationOverlay::setPoints(const torch::Tensor& sample_x) {
  if (sample_x.defined()) m_points = tensor_values(sample_x);
}

void CorrelationOverlay::show(const QString& id, const ModelList& models) {
  const auto* entry = id.isEmpty() ? nullptr : models.find(id);
  const auto it = m_correlations.find(id);
  if (!entry || !entry->enabled || !std::isfinite(m_hover_x) || it == m_correlations.end() ||
      m_points.empty() || it->second.first.size(0) != int64_t(m_points.size())) {
    m_plot->clearCorrelation();
    return;
  }
  // The row of the point nearest to the hovered x.
  size_t row = 0;
  for (size_t i = 1; i < m_points.size(); ++i) {
    if (std::abs(m_points[i] - m_hover_x) < std::abs(m_points[row] - m_hover_x)) row = i;
  }
  const auto values = tensor_values(it->second.first[int64_t(row)]);
  const auto label = QObject::tr("correlation with x = %1 (%2%3)")
                         .arg(m_points[row], 0, 'g', 4)
                         .arg(entry->name)
                         .arg(it->second.second ? QObject::tr(", estimated") : QString());
  m_plot->setCorrelation(m_points[row], entry->colour, label,
                         QVector<double>(m_points.begin(), m_points.end()),
                         QVector<double>(values.begin(), values.end()));
}

}  // namespace npe::widgets
