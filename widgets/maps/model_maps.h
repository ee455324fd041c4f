#pragma once
// The map tab's view of a prediction round: each model's prediction over the target window as
// maps in the data's units, the truth beside them, and the round as a table (File ▸ Export
// predictions). The layers, small maps, hover text and export all read the models through
// these, so they agree on units and on which cells have no data.

#include <utility>

#include <torch/types.h>
#include <QPoint>
#include <QRect>
#include <QString>

#include "npe/data/point_table.h"

namespace npe {
class Era5TaskSource;
}

namespace npe::widgets {

class ModelList;
struct ModelEntry;
struct PredictionResult;

/// Where the maps are read: the data, the target window (cells of the whole grid) and the hour.
struct MapFrame {
  const Era5TaskSource& source;
  QRect window;
  int hour = 0;
};

/// The whole grid's truth at the frame's hour, in °C.
torch::Tensor truth_celsius(const MapFrame& frame);

/// Model `id`'s mean (°C) and standard deviation (K) over the target window, [w, w]; cells
/// without a value or without place features are NaN ("no data", not predictions). Undefined
/// tensors when the round has no prediction of this window's size for the model.
std::pair<torch::Tensor, torch::Tensor> model_maps(const MapFrame& frame,
                                                   const PredictionResult& round,
                                                   const QString& id);

/// One row per window cell: latitude, longitude, truth_celsius and "<model>_mean_celsius",
/// "<model>_std_kelvin" for each model of `models` in the round. Empty when none predicted.
PointTable map_prediction_table(const MapFrame& frame, const PredictionResult& round,
                                const ModelList& models);

/// The hover line for a grid cell: position and truth, and inside the window each enabled
/// model's mean ± standard deviation (and whether a station is there). `truth_hidden`: the
/// truth is "hidden" inside the window (an episode runs).
QString describe_cell(const MapFrame& frame, const PredictionResult& round, const ModelList& models,
                      QPoint cell, bool station, bool truth_hidden = false);

}  // namespace npe::widgets
