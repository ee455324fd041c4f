#include "maps/map_layer.h"

#include <algorithm>
#include <cmath>

#include <QCoreApplication>

#include "maps/small_maps.h"

namespace npe::widgets {
namespace {

QString map_layer_tr(const char* text) {
  return QCoreApplication::translate("MapLayer", text);
}

}  // namespace

void set_layer(MapScene& scene, const torch::Tensor& truth, const QString& truth_title,
               const QRect& window, const ModelLayer* model) {
  using torch::indexing::Slice;
  auto inside = [&](const torch::Tensor& t) {
    return t.index({Slice(window.top(), window.top() + window.height()),
                    Slice(window.left(), window.left() + window.width())});
  };
  double low = finite_min(truth, 0.0), high = finite_max(truth, 1.0);
  scene.palette = MapScene::Palette::Temperature;
  scene.colour_title = "°C";
  scene.values = truth;
  scene.title = truth_title;
  if (model && !model->mean.defined()) {
    scene.title = map_layer_tr("%1: computing… (truth shown)").arg(model->model_name);
  } else if (model && model->kind == "mean") {
    auto shown = truth.clone();
    inside(shown).copy_(model->mean);
    scene.values = shown;
    low = std::min(low, finite_min(model->mean, low));
    high = std::max(high, finite_max(model->mean, high));
    scene.title =
        map_layer_tr("%1 mean (in the black square; truth outside)").arg(model->model_name);
  } else if (model) {
    auto shown = torch::full_like(truth, std::nan(""));
    if (model->kind == "acquisition") {
      inside(shown).copy_(model->mean);
      low = 0.0, high = std::max(1e-6, finite_max(model->mean, 0.0));
      scene.palette = MapScene::Palette::Sequential;
      scene.colour_title = model->unit;
      scene.title = map_layer_tr("%1: where to observe next").arg(model->model_name);
    } else if (model->kind == "stddev") {
      inside(shown).copy_(model->stddev);
      low = 0.0, high = std::max(1e-3, finite_max(model->stddev, 0.0));
      scene.palette = MapScene::Palette::Sequential;
      scene.colour_title = "σ (K)";
      scene.title = map_layer_tr("%1 standard deviation").arg(model->model_name);
    } else {
      auto error = model->mean - inside(truth);
      inside(shown).copy_(error);
      const double m = std::max(1e-3, finite_max(error.abs(), 0.0));
      low = -m, high = m;
      scene.palette = MapScene::Palette::Diverging;
      scene.colour_title = "error (K)";
      scene.title = map_layer_tr("%1 error, mean − truth").arg(model->model_name);
    }
    scene.values = shown;
  }
  scene.low = low;
  scene.high = high;
}

}  // namespace npe::widgets
