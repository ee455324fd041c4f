#pragma once
// What the maps tab says about a gridded file, and where a latitude/longitude box lies on it.

#include <cstdint>

#include <QRect>
#include <QString>

namespace npe {
struct GriddedField;
}

namespace npe::widgets {

/// A latitude/longitude box in degrees (the shipped models' training region).
struct LatLonBox {
  double south = 0, north = 0, west = 0, east = 0;
};

/// "file.nc: 2 m temperature (K), 61 × 81 cells of 0.25° × 0.25°, 744 time(s) from ...".
QString describe_field(const GriddedField& field);
/// What a station reports in a task window of `steps` times `step_hours` apart.
QString describe_station_reports(int64_t steps, int64_t step_hours);
/// The cells (x = column, y = row) of the field inside the box; null when none is.
QRect cells_within(const GriddedField& field, const LatLonBox& box);
/// For a file other than the training file: where the models' training region is on it (its
/// outline), or where it lies when the file does not cover it.
QString describe_training_region(const GriddedField& field, const LatLonBox& box);

}  // namespace npe::widgets
