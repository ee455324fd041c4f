#include "maps/training_data.h"

#include <filesystem>

#include "common/model_entry.h"
#include "npe/data/gridded_field.h"
#include "npe/errors.h"

namespace npe::widgets {

Era5TaskConfig TrainingData::config_for(const std::string& path,
                                        const std::string& variable) const {
  return (config ? *config : Era5TaskConfig{}).reading(path, variable);
}

QRect TrainingData::region_cells(const GriddedField& field) const {
  return region ? cells_within(field, *region) : QRect();
}

namespace {

// The source's training split, in degrees: the rows of its region and the whole width.
LatLonBox training_region_of(const Era5TaskSource& source) {
  const auto& f = source.field();
  const auto rows = source.region_extent(source.region_of(Split::Train));
  const auto [south, north] =
      std::minmax(f.latitudes[size_t(rows.row_begin)], f.latitudes[size_t(rows.row_end - 1)]);
  const auto [west, east] = std::minmax(f.longitudes.front(), f.longitudes.back());
  return LatLonBox{south, north, west, east};
}

}  // namespace

TrainingData load_training_data(const std::vector<ModelEntry>& models) {
  TrainingData data;
  try {
    data.source = std::make_shared<Era5TaskSource>();
    data.config = data.source->config();
    data.region = training_region_of(*data.source);
  } catch (const Error& e) {
    data.source.reset();
    data.error = QString::fromUtf8(e.what());
    // Without the training file the shipped checkpoints still carry their statistics.
    for (const auto& entry : models) {
      if (!entry.task.is_object() || entry.task.value("kind", "") != "era5") continue;
      try {
        data.config = Era5TaskConfig::from_json(entry.task);
        break;
      } catch (const Error&) {
        // A checkpoint with unreadable settings: try the next.
      }
    }
  }
  return data;
}

std::optional<TrainingData> own_training_data(const ModelEntry& entry) {
  if (!entry.task.is_object() || entry.task.value("kind", std::string()) != "era5") return {};
  auto config = Era5TaskConfig::from_json(entry.task);
  // The shipped month (an empty path names it) is the tab's own data.
  if (config.data.empty() || Era5TaskConfig{}.reads(config.data)) return {};
  if (config.data.is_relative() && !std::filesystem::exists(config.data)) {
    const auto beside =
        std::filesystem::path(entry.checkpoint_path.toStdString()).parent_path() / config.data;
    if (std::filesystem::exists(beside)) config.data = beside;
  }
  TrainingData data;
  data.source = std::make_shared<Era5TaskSource>(config);
  data.config = data.source->config();
  data.region = training_region_of(*data.source);
  return data;
}

TrainingData training_for(const std::filesystem::path& path, const std::vector<ModelEntry>& models,
                          const TrainingData& current) {
  for (const auto& entry : models) {
    if (!entry.task.is_object() || entry.task.value("kind", std::string()) != "era5") continue;
    try {
      if (auto own = own_training_data(entry); own && own->source->config().reads(path)) {
        return std::move(*own);
      }
    } catch (const Error&) {
      // Its file is gone or unreadable: it cannot be the one being opened.
    }
  }
  if (Era5TaskConfig{}.reads(path)) {
    auto shipped = load_training_data(models);
    shipped.source.reset();
    if (shipped.error.isEmpty()) return shipped;
  }
  return current;
}

}  // namespace npe::widgets
