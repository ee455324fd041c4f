#pragma once
// Writing predictions on a latitude/longitude grid as CF-compliant NetCDF, the format the
// field's other tools read (xarray, ncview, Panoply, CDO).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <torch/types.h>

namespace npe {

/// One field of the output on the grid.
struct GridVariable {
  std::string name;           ///< NetCDF variable name ("mean")
  std::string long_name;      ///< CF long_name
  std::string units;          ///< CF units ("K")
  std::string standard_name;  ///< CF standard_name, or empty
  torch::Tensor values;       ///< [latitudes, longitudes]; NaN where there is no value
};

struct GridOutput {
  std::vector<double> latitudes;   ///< degrees north, in the order of the values' rows
  std::vector<double> longitudes;  ///< degrees east, in the order of the values' columns
  int64_t valid_time = 0;          ///< seconds since 1970-01-01 00:00 UTC
  std::vector<GridVariable> variables;
  std::string title, source, history;  ///< global attributes (CF)
};

/// Writes `output` as NetCDF (classic 64-bit-offset format, readable by every netCDF tool;
/// Conventions "CF-1.8") with dimensions time (1), latitude and longitude, float32 variables
/// (time, latitude, longitude) with _FillValue NaN. The file is built in memory and written
/// atomically: nothing is written when it fails. Throws DataError (shapes that do not match the
/// coordinates, invalid names, a file that cannot be written).
void write_grid_netcdf(const std::filesystem::path& path, const GridOutput& output);

}  // namespace npe
