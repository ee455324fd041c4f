#include "image/image_readout.h"

#include <utility>

#include <torch/torch.h>
#include <QObject>

#include "common/explorer_panel.h"
#include "common/model_list.h"
#include "common/prediction_service.h"

namespace npe::widgets {

PointTable image_prediction_table(const ShownCanvas& canvas, const PredictionResult& round,
                                  const ModelList& models) {
  const int n = canvas.size;
  PointTable table;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> shown;
  for (const auto& p : round.models) {
    const auto* entry = models.find(p.id);
    if (!entry || !p.mean.defined() || p.mean.size(0) != n * n) continue;
    shown.emplace_back(p.mean.to(torch::kFloat64).flatten(),
                       p.stddev.to(torch::kFloat64).flatten());
    table.columns.push_back(prediction_column(entry->name, "mean"));
    table.columns.push_back(prediction_column(entry->name, "std"));
  }
  if (shown.empty()) return {};
  table.columns.insert(table.columns.begin(), {"row", "column", "truth", "context"});
  const auto truth = canvas.truth.to(torch::kFloat64).contiguous();
  const auto* t = truth.data_ptr<double>();
  std::vector<const double*> columns;
  for (const auto& [mean, stddev] : shown) {
    columns.push_back(mean.data_ptr<double>());
    columns.push_back(stddev.data_ptr<double>());
  }
  for (int row = 0; row < n; ++row) {
    for (int column = 0; column < n; ++column) {
      const int p = row * n + column;
      auto& line = table.rows.emplace_back();
      line = {double(row), double(column), t[p], canvas.context[size_t(p)] ? 1.0 : 0.0};
      for (const auto* values : columns) line.push_back(values[p]);
    }
  }
  return table;
}

QString describe_pixel(const ShownCanvas& canvas, const PredictionResult& round,
                       const ModelList& models, int row, int column) {
  const int n = canvas.size;
  if (row < 0 || column < 0 || row >= n || column >= n) return {};
  const int p = row * n + column;
  const auto truth = canvas.truth[row][column].item<double>();
  QString text = QObject::tr("pixel (%1, %2): true value %3%4")
                     .arg(row)
                     .arg(column)
                     .arg(truth, 0, 'f', 3)
                     .arg(canvas.context[size_t(p)] ? QObject::tr(" (context)") : QString());
  for (const auto& prediction : round.models) {
    const auto* entry = models.find(prediction.id);
    if (!entry || !prediction.mean.defined()) continue;
    text += QString(" · %1 %2 ± %3")
                .arg(entry->name)
                .arg(prediction.mean[p][0].item<double>(), 0, 'f', 3)
                .arg(prediction.stddev[p][0].item<double>(), 0, 'f', 3);
  }
  return text;
}

}  // namespace npe::widgets
