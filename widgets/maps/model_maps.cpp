#include "maps/model_maps.h"

#include <cmath>

#include <torch/torch.h>
#include <QCoreApplication>

#include "common/explorer_panel.h"
#include "common/model_list.h"
#include "common/prediction_service.h"
#include "npe/data/era5_tasks.h"

namespace npe::widgets {
namespace {

constexpr double kKelvin = 273.15;

QString map_explorer_tr(const char* text) {
  return QCoreApplication::translate("MapExplorer", text);
}

}  // namespace

torch::Tensor truth_celsius(const MapFrame& frame) {
  return frame.source.field().values[frame.hour].to(torch::kFloat64) - kKelvin;
}

std::pair<torch::Tensor, torch::Tensor> model_maps(const MapFrame& frame,
                                                   const PredictionResult& round,
                                                   const QString& id) {
  const int w = frame.window.width();
  for (const auto& p : round.models) {
    if (p.id != id || !p.mean.defined() || p.mean.numel() != w * w) continue;
    auto mean = frame.source.unstandardise(p.mean.to(torch::kFloat64)).view({w, w}) - kKelvin;
    auto sd = (p.stddev.to(torch::kFloat64) * frame.source.output_scale()).view({w, w});
    using torch::indexing::Slice;
    const auto rows = Slice(frame.window.top(), frame.window.top() + w);
    const auto cols = Slice(frame.window.left(), frame.window.left() + w);
    const auto no_data =
        ~(frame.source.usable_cells().index({rows, cols}) &
          torch::isfinite(frame.source.field().values[frame.hour].index({rows, cols})));
    return {mean.masked_fill(no_data, std::nan("")), sd.masked_fill(no_data, std::nan(""))};
  }
  return {};
}

PointTable map_prediction_table(const MapFrame& frame, const PredictionResult& round,
                                const ModelList& models) {
  const auto& window = frame.window;
  const int w = window.width();
  PointTable table;
  std::vector<torch::Tensor> columns;
  for (const auto& p : round.models) {
    const auto* entry = models.find(p.id);
    if (!entry) continue;
    auto [mean, sd] = model_maps(frame, round, p.id);
    if (!mean.defined()) continue;
    columns.push_back(mean.contiguous());
    columns.push_back(sd.contiguous());
    table.columns.push_back(prediction_column(entry->name, "mean_celsius"));
    table.columns.push_back(prediction_column(entry->name, "std_kelvin"));
  }
  if (columns.empty()) return {};
  table.columns.insert(table.columns.begin(), {"latitude", "longitude", "truth_celsius"});
  using torch::indexing::Slice;
  const auto truth =
      truth_celsius(frame)
          .index({Slice(window.top(), window.top() + w), Slice(window.left(), window.left() + w)})
          .contiguous();
  const auto& f = frame.source.field();
  for (int r = 0; r < w; ++r) {
    for (int c = 0; c < w; ++c) {
      auto& line = table.rows.emplace_back();
      line = {f.latitudes[size_t(window.top() + r)], f.longitudes[size_t(window.left() + c)],
              truth[r][c].item<double>()};
      for (const auto& values : columns) line.push_back(values[r][c].item<double>());
    }
  }
  return table;
}

QString describe_cell(const MapFrame& frame, const PredictionResult& round, const ModelList& models,
                      QPoint cell, bool station, bool truth_hidden) {
  if (cell.x() < 0) return {};
  const auto& f = frame.source.field();
  const double lat = f.latitudes[cell.y()], lon = f.longitudes[cell.x()];
  const bool hidden = truth_hidden && frame.window.contains(cell);
  QString text =
      map_explorer_tr("%1°%2, %3°%4 · truth %5")
          .arg(std::abs(lat), 0, 'f', 2)
          .arg(lat >= 0 ? "N" : "S")
          .arg(std::abs(lon), 0, 'f', 2)
          .arg(lon >= 0 ? "E" : "W")
          .arg(hidden ? map_explorer_tr("hidden")
                      : QString("%1 °C").arg(
                            truth_celsius(frame)[cell.y()][cell.x()].item<double>(), 0, 'f', 2));
  if (!frame.window.contains(cell)) return text;
  const auto local = cell - frame.window.topLeft();
  if (station) text += map_explorer_tr(" (station)");
  for (const auto& e : models.enabledEntries()) {
    auto [mean, sd] = model_maps(frame, round, e.id);
    if (!mean.defined()) continue;
    text += QString(" · %1 %2 ± %3")
                .arg(e.name)
                .arg(mean[local.y()][local.x()].item<double>(), 0, 'f', 2)
                .arg(sd[local.y()][local.x()].item<double>(), 0, 'f', 2);
  }
  return text;
}

}  // namespace npe::widgets
