#pragma once
// Coastlines from the GSHHG shoreline database as Debian packages it for GMT (gmt-gshhg-low:
// "binned" NetCDF files), for drawing on maps.

#include <filesystem>
#include <utility>
#include <vector>

namespace npe {

/// A polyline of (longitude, latitude) points in degrees, longitudes in [-180, 180).
using Polyline = std::vector<std::pair<double, double>>;

/// $NPE_GSHHG_FILE, else the low-resolution shorelines of gmt-gshhg-low.
std::filesystem::path default_coastline_file();

/// Shoreline pieces (level 1: land against ocean; 2 adds lake shores) of every bin that
/// overlaps the box. Throws DataError naming the file when it is missing or not a binned
/// GSHHG file.
std::vector<Polyline> read_gshhg_coastlines(const std::filesystem::path& path, double lat_min,
                                            double lat_max, double lon_min, double lon_max,
                                            int max_level = 1);

}  // namespace npe
