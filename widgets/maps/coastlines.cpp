#include "maps/coastlines.h"

#include "npe/data/coastlines.h"

namespace npe::widgets {

std::shared_ptr<const std::vector<std::vector<QPointF>>> load_coastlines(double lat_min,
                                                                         double lat_max,
                                                                         double lon_min,
                                                                         double lon_max) {
  auto lines = std::make_shared<std::vector<std::vector<QPointF>>>();
  for (const auto& polyline :
       read_gshhg_coastlines(default_coastline_file(), lat_min, lat_max, lon_min, lon_max)) {
    std::vector<QPointF> line;
    for (const auto& [lon, lat] : polyline) line.emplace_back(lon, lat);
    lines->push_back(std::move(line));
  }
  return lines;
}

}  // namespace npe::widgets
