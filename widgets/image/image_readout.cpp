#include "image/image_readout.h"

#include <utility>

#include <torch/torch.h>
#include <QObject>

#include "common/explorer_panel.h"
#include "common/model_list.h"
#include "common/prediction_service.h"

namespace npe::widgets {

namespace {

// Column suffixes of a pixel's values: none for grey, the channel for colour.
std::vector<std::string> channel_suffixes(int channels) {
  if (channels == 1) return {""};
  if (channels == 3) return {"_r", "_g", "_b"};
  std::vector<std::string> suffixes;
  for (int k = 0; k < channels; ++k) suffixes.push_back("_" + std::to_string(k));
  return suffixes;
}

int channels_of(const ShownCanvas& canvas) {
  return canvas.truth.dim() == 3 ? int(canvas.truth.size(2)) : 1;
}

// Values of a pixel (its channels), "0.412" or "(0.412, 0.380, 0.100)".
QString values_text(const torch::Tensor& values) {
  const auto flat = values.to(torch::kFloat64).flatten().contiguous();
  QStringList parts;
  for (int64_t k = 0; k < flat.numel(); ++k)
    parts << QString::number(flat[k].item<double>(), 'f', 3);
  return parts.size() == 1 ? parts.front() : "(" + parts.join(", ") + ")";
}

}  // namespace

PointTable image_prediction_table(const ShownCanvas& canvas, const PredictionResult& round,
                                  const ModelList& models) {
  const int n = canvas.size;
  const int channels = channels_of(canvas);
  const auto suffixes = channel_suffixes(channels);
  PointTable table;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> shown;  // [n * n, channels] each
  for (const auto& p : round.models) {
    const auto* entry = models.find(p.id);
    if (!entry || !p.mean.defined() || p.mean.size(0) != n * n || p.mean.size(1) != channels) {
      continue;
    }
    shown.emplace_back(p.mean.to(torch::kFloat64).contiguous(),
                       p.stddev.to(torch::kFloat64).contiguous());
    for (const char* what : {"mean", "std"}) {
      for (const auto& suffix : suffixes) {
        table.columns.push_back(prediction_column(entry->name, what + suffix));
      }
    }
  }
  if (shown.empty()) return {};
  std::vector<std::string> first = {"row", "column"};
  for (const auto& suffix : suffixes) first.push_back("truth" + suffix);
  first.push_back("context");
  table.columns.insert(table.columns.begin(), first.begin(), first.end());
  const auto truth = canvas.truth.to(torch::kFloat64).reshape({n * n, channels}).contiguous();
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
      line = {double(row), double(column)};
      for (int k = 0; k < channels; ++k) line.push_back(t[p * channels + k]);
      line.push_back(canvas.context[size_t(p)] ? 1.0 : 0.0);
      for (const auto* values : columns) {
        for (int k = 0; k < channels; ++k) line.push_back(values[p * channels + k]);
      }
    }
  }
  return table;
}

QString describe_pixel(const ShownCanvas& canvas, const PredictionResult& round,
                       const ModelList& models, int row, int column) {
  const int n = canvas.size;
  if (row < 0 || column < 0 || row >= n || column >= n) return {};
  const int p = row * n + column;
  QString text = QObject::tr("pixel (%1, %2): true value %3%4")
                     .arg(row)
                     .arg(column)
                     .arg(values_text(canvas.truth[row][column]))
                     .arg(canvas.context[size_t(p)] ? QObject::tr(" (context)") : QString());
  for (const auto& prediction : round.models) {
    const auto* entry = models.find(prediction.id);
    if (!entry || !prediction.mean.defined() || prediction.mean.size(0) != n * n) continue;
    text += QString(" · %1 %2 ± %3")
                .arg(entry->name)
                .arg(values_text(prediction.mean[p]))
                .arg(values_text(prediction.stddev[p]));
  }
  return text;
}

}  // namespace npe::widgets
