#pragma once
// npe place --grid: where an ERA5-trained model would put the next stations in a window of a
// latitude/longitude grid (NetCDF or GRIB), beside stations given by latitude and longitude.
// The scene is the Maps tab's (core's era5_scene.h): each station is the grid cell nearest to
// it, observed at the window's times from the grid itself.

#include <cstdint>
#include <optional>
#include <string>

#include "npe/data/era5_scene.h"
#include "npe/predictors/sensor_placement.h"

namespace npe::cli {

struct GridPlaceArguments {
  std::string checkpoint;
  std::string grid;      ///< NetCDF or GRIB file
  std::string variable;  ///< empty: the file's only gridded variable
  /// "YYYY-MM-DDTHH:MM" (UTC) of one of the file's times; empty: the first with a whole window.
  std::string time;
  std::string stations;          ///< CSV with latitude and longitude columns
  std::optional<LatLon> centre;  ///< the window's centre; none: the stations' middle
  int64_t count = 1;
  int64_t batch = 64;
  AcquisitionScore score = AcquisitionScore::variance_reduction;
  std::string device = "cpu";
  std::string out;
};

/// Greedy placement (place_sensors) with a progress bar on the terminal.
Placement place_showing_progress(Predictor& predictor, const TaskBatch& batch,
                                 const torch::Tensor& candidates, PlacementOptions options);

/// Writes the proposals (order, latitude, longitude, row, column, score in the file's units) to
/// args.out. Throws npe::Error for unreadable or unsuitable files and models.
int run_place_grid(const GridPlaceArguments& args);

}  // namespace npe::cli
