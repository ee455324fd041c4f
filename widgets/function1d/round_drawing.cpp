#include "function1d/round_drawing.h"

#include <QCoreApplication>

#include "common/model_list.h"
#include "common/prediction_service.h"
#include "function1d/function_plot.h"
#include "function1d/tensor_values.h"

namespace npe::widgets {
namespace {

QVector<double> values_of(const torch::Tensor& t) {
  const auto values = tensor_values(t);
  return QVector<double>(values.begin(), values.end());
}

}  // namespace

QStringList draw_round(FunctionPlot& plot, const PredictionResult& round, const ModelList& models) {
  QStringList sample_errors;
  const auto x = values_of(round.xt);
  plot.setQuickDrawing(!round.refine);
  for (const auto& prediction : round.models) {
    const auto* entry = models.find(prediction.id);
    if (!entry) continue;
    if (!prediction.error.isEmpty() || !entry->enabled) {
      plot.removeModelCurve(prediction.id);
      continue;
    }
    auto note = prediction.note();
    if (prediction.updating) {
      const auto updating = QCoreApplication::translate("FunctionExplorer", "updating…");
      note = note.isEmpty() ? updating : note + ", " + updating;
    }
    const auto legend = note.isEmpty() ? entry->name : QString("%1 (%2)").arg(entry->name, note);
    plot.setModelCurve(prediction.id, legend, entry->colour, x, values_of(prediction.mean),
                       values_of(prediction.stddev));
    plot.setModelUpdating(prediction.id, prediction.updating);
    if (prediction.samples.defined()) {
      std::vector<QVector<double>> lines;
      for (int64_t k = 0; k < prediction.samples.size(0); ++k) {
        lines.push_back(values_of(prediction.samples[k]));
      }
      plot.setModelSamples(prediction.id, entry->colour, values_of(round.sample_x), lines);
    } else {
      plot.removeModelSamples(prediction.id);
    }
    if (!prediction.sample_error.isEmpty()) {
      sample_errors << QCoreApplication::translate("FunctionExplorer", "%1: no samples: %2")
                           .arg(entry->name, prediction.sample_error);
    }
  }
  // Models of this round not done yet whose last curve was drawn at other query points (the view
  // moved): that curve stays, faded, until theirs arrives.
  for (const auto& id : round.pending) plot.setModelUpdating(id, true);
  return sample_errors;
}

}  // namespace npe::widgets
