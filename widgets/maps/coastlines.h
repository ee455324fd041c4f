#pragma once
// Coastlines for the map view, read once per process from the GSHHG file (core) and converted
// to Qt points.

#include <memory>
#include <vector>

#include <QPointF>

namespace npe::widgets {

/// Coastline polylines (longitude, latitude) overlapping the box. Throws npe::DataError when
/// the GSHHG file (gmt-gshhg-low) is missing or unreadable.
std::shared_ptr<const std::vector<std::vector<QPointF>>> load_coastlines(double lat_min,
                                                                         double lat_max,
                                                                         double lon_min,
                                                                         double lon_max);

}  // namespace npe::widgets
