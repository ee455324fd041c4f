#include "function1d/attention_probe.h"

#include "common/model_list.h"
#include "common/prediction_service.h"
#include "function1d/function_plot.h"
#include "function1d/teaching_aids_box.h"
#include "npe/data/function_scene.h"

namespace npe::widgets {

AttentionProbe::AttentionProbe(FunctionPlot* plot, PredictionService* service,
                               const ModelList* models, const TeachingAidsBox* aids,
                               QObject* parent)
    : QObject(parent), m_plot(plot), m_service(service), m_models(models), m_aids(aids) {
  connect(m_service, &PredictionService::attentionReady, this, &AttentionProbe::onAttention);
}

void AttentionProbe::probe(double x, const std::vector<QPointF>& context) {
  const auto id = m_aids->attentionModel();
  if (id.isEmpty()) return;
  const auto* entry = m_models->find(id);
  if (!entry) return;
  AttentionRequest request;
  // The serial lets the service drop superseded requests while the mouse moves on.
  request.serial = ++m_serial;
  request.model = *entry;
  FunctionScene scene;
  for (const auto& p : context) {
    scene.context_x.push_back(p.x());
    scene.context_y.push_back(p.y());
  }
  scene.query_low = scene.query_high = x;
  scene.num_queries = 1;
  request.batch = scene_task(scene).batch;
  m_x = x;
  m_service->request_attention(std::move(request));
}

void AttentionProbe::onAttention(const AttentionResult& result) {
  // Switched off (or to a model without attention) while the request ran.
  if (m_aids->attentionModel().isEmpty() || result.weights.empty()) {
    m_plot->clearAttention();
    return;
  }
  m_plot->setAttention(m_x, result.mean, result.weights);
}

}  // namespace npe::widgets
