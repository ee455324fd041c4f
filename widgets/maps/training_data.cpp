#include "maps/training_data.h"

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

TrainingData load_training_data(const std::vector<ModelEntry>& models) {
  TrainingData data;
  try {
    data.source = std::make_shared<Era5TaskSource>();
    data.config = data.source->config();
    const auto& f = data.source->field();
    const auto south = data.source->region_extent(Era5Region::South);
    data.region =
        LatLonBox{f.latitudes[size_t(south.row_end - 1)], f.latitudes[size_t(south.row_begin)],
                  f.longitudes.front(), f.longitudes.back()};
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

}  // namespace npe::widgets
