#include "maps/grid_description.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QStringList>

#include "npe/data/gridded_field.h"

namespace npe::widgets {
namespace {

QString grid_description_tr(const char* text) {
  return QCoreApplication::translate("GridDescription", text);
}

}  // namespace

QString describe_field(const GriddedField& f) {
  // The unit the file states (the tasks hold the values in kelvin, f.units).
  std::string units = f.units;
  for (const auto& v : f.file_variables)
    if (v.name == f.variable && !v.units.empty()) units = v.units;
  const int rows = static_cast<int>(f.num_latitudes()), cols = static_cast<int>(f.num_longitudes());
  return grid_description_tr("%1: %2 (%3), %4 × %5 cells of %6° × %7°, %8 time(s) from %9")
      .arg(QFileInfo(QString::fromStdString(f.source.string())).fileName(),
           QString::fromStdString(f.long_name.empty() ? f.variable : f.long_name),
           QString::fromStdString(units))
      .arg(rows)
      .arg(cols)
      .arg(rows > 1 ? f.latitude_step() : 0.0)
      .arg(cols > 1 ? f.longitude_step() : 0.0)
      .arg(f.num_times())
      .arg(QString::fromStdString(format_utc(f.valid_times.front())));
}

QString describe_station_reports(int64_t steps, int64_t step_hours) {
  if (steps == 1) {
    return grid_description_tr(
        "A station reports its cell's temperature at the time shown (the file has one time per "
        "task window).");
  }
  QStringList before;
  for (int64_t k = 1; k < steps; ++k) before << QString::number(k * step_hours);
  return grid_description_tr("A station reports its cell's temperature now and %1 hours before.")
      .arg(before.join(", "));
}

QRect cells_within(const GriddedField& f, const LatLonBox& box) {
  const double eps = 1e-6;
  int top = -1, bottom = -1, left = -1, right = -1;
  for (int r = 0; r < int(f.latitudes.size()); ++r) {
    if (f.latitudes[size_t(r)] < box.south - eps || f.latitudes[size_t(r)] > box.north + eps)
      continue;
    if (top < 0) top = r;
    bottom = r;
  }
  for (int c = 0; c < int(f.longitudes.size()); ++c) {
    if (f.longitudes[size_t(c)] < box.west - eps || f.longitudes[size_t(c)] > box.east + eps)
      continue;
    if (left < 0) left = c;
    right = c;
  }
  if (top < 0 || left < 0) return {};
  return QRect(QPoint(left, top), QPoint(right, bottom));
}

QString describe_training_region(const GriddedField& field, const LatLonBox& box) {
  if (!cells_within(field, box).isNull()) {
    return grid_description_tr(". Green outline: where the models were trained (another file).");
  }
  return grid_description_tr(". The models were trained on %1–%2°N, %3–%4°E, outside this file.")
      .arg(box.south)
      .arg(box.north)
      .arg(box.west)
      .arg(box.east);
}

}  // namespace npe::widgets
