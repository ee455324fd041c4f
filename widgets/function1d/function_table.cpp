#include "function1d/function_table.h"

#include <limits>

#include "common/explorer_panel.h"
#include "common/model_list.h"
#include "common/prediction_service.h"
#include "function1d/tensor_values.h"

namespace npe::widgets {

PointTable function_prediction_table(const PredictionResult& result, const ModelList& models) {
  if (!result.xt.defined()) return {};
  PointTable table;
  table.columns = {"x", "y", "held_out"};
  std::vector<const ModelPrediction*> shown;
  for (const auto& prediction : result.models) {
    const auto* entry = models.find(prediction.id);
    if (!entry || !prediction.mean.defined()) continue;
    shown.push_back(&prediction);
    table.columns.push_back(prediction_column(entry->name, "mean"));
    table.columns.push_back(prediction_column(entry->name, "std"));
  }
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  auto add_rows = [&](const torch::Tensor& x, const torch::Tensor& y, bool held_out) {
    if (!x.defined()) return;
    const auto xs = tensor_values(x.flatten());
    const auto ys = y.defined() ? tensor_values(y.flatten()) : std::vector<double>{};
    for (size_t i = 0; i < xs.size(); ++i) {
      auto& row = table.rows.emplace_back();
      row = {xs[i], i < ys.size() ? ys[i] : nan, held_out ? 1.0 : 0.0};
      for (const auto* p : shown) {
        const auto& mean = held_out ? p->held_out_mean : p->mean;
        const auto& stddev = held_out ? p->held_out_stddev : p->stddev;
        const bool known = mean.defined() && int64_t(i) < mean.size(0);
        row.push_back(known ? mean[int64_t(i)][0].item<double>() : nan);
        row.push_back(known ? stddev[int64_t(i)][0].item<double>() : nan);
      }
    }
  };
  add_rows(result.xt, {}, false);
  add_rows(result.held_out_x, result.held_out_y, true);
  return table;
}

}  // namespace npe::widgets
