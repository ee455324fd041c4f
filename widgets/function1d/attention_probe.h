#pragma once
// The 1-D tab's attention overlay: on hover, asks the prediction service for the chosen model's
// attention from the hovered x to each context point and draws it as lines on the plot.

#include <cstdint>
#include <vector>

#include <QObject>
#include <QPointF>

namespace npe::widgets {

class FunctionPlot;
class ModelList;
class PredictionService;
class TeachingAidsBox;
struct AttentionResult;

class AttentionProbe final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(AttentionProbe)

 public:
  /// `aids` names the model whose attention is shown (none: the probe does nothing).
  AttentionProbe(FunctionPlot* plot, PredictionService* service, const ModelList* models,
                 const TeachingAidsBox* aids, QObject* parent = nullptr);

  /// Asks for the attention from display x to each context point (display coordinates). The
  /// answer arrives asynchronously; only the newest is drawn.
  void probe(double x, const std::vector<QPointF>& context);

 private:
  void onAttention(const AttentionResult& result);

  FunctionPlot* m_plot;
  PredictionService* m_service;
  const ModelList* m_models;
  const TeachingAidsBox* m_aids;
  uint64_t m_serial = 0;
  double m_x = 0.0;
};

}  // namespace npe::widgets
