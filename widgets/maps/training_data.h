#pragma once
// What the Maps tab knows of the data its models were trained on: the ERA5 training file (read
// when present), its training region, and the task settings (statistics, units, window) that
// any file the user opens is read with, so that the models see it as they saw their training.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QRect>
#include <QString>

#include "maps/grid_description.h"
#include "npe/data/era5_tasks.h"

namespace npe::widgets {

struct ModelEntry;

struct TrainingData {
  /// The training file; null when it cannot be read (`error` says why).
  std::shared_ptr<Era5TaskSource> source;
  QString error;
  /// The training file's task settings, else those a shipped ERA5 checkpoint carries.
  std::optional<Era5TaskConfig> config;
  /// The training region (the file's South block) in degrees; unknown without the file.
  std::optional<LatLonBox> region;

  /// The settings for showing `path`: the models' statistics and units, and the file as a
  /// whole unless it is the training file (Era5TaskConfig::whole_file).
  Era5TaskConfig config_for(const std::string& path, const std::string& variable) const;
  /// The training region as cells of `field`'s grid; null when unknown or outside it.
  QRect region_cells(const GriddedField& field) const;
};

/// Reads the default training file; without it, takes the settings from the first of `models`
/// that was trained on ERA5.
TrainingData load_training_data(const std::vector<ModelEntry>& models);

/// The data a model trained on a grid of the user's brings (`npe train --task gridded --data`):
/// its file read with the model's settings as in training, and its training region. Null for a
/// model of the shipped ERA5 month or of another task. A relative data path is also looked for
/// beside the checkpoint. Throws npe::Error when the file cannot be read.
std::optional<TrainingData> own_training_data(const ModelEntry& entry);

/// What a file is read with, so that the models that trained on it see it as they did: the
/// training data of the first of `models` trained on `path`, else the shipped month's when
/// `path` is that month, else `current` (another file is read with the last models' settings).
TrainingData training_for(const std::filesystem::path& path, const std::vector<ModelEntry>& models,
                          const TrainingData& current);

}  // namespace npe::widgets
