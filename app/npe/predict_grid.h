#pragma once
// npe predict --grid: an ERA5-trained model's prediction over a whole latitude/longitude grid
// (NetCDF or GRIB), from stations or from a fraction of the grid's own cells, written as
// CF-compliant NetCDF.

#include <cstdint>
#include <string>

namespace npe::cli {

struct GridPredictArguments {
  std::string checkpoint;
  std::string grid;      ///< NetCDF or GRIB file
  std::string variable;  ///< empty: the file's only gridded variable
  std::string time;      ///< "YYYY-MM-DDTHH:MM" (UTC) of one of the file's times; empty: the first
  std::string stations;  ///< CSV of latitude, longitude, value (the file's units); or ...
  double context_fraction = 0.0;  ///< ... this fraction of the grid's cells, drawn with seed
  uint64_t seed = 0;
  int64_t chunk = 4096;
  /// Cells per side of the tiles predicted one at a time, each with the context inside it (the
  /// models were trained on windows of 15 cells); 0: the whole grid is one task.
  int64_t tile = 0;
  std::string device = "cpu";
  std::string out;
};

/// Writes the prediction (mean, std, truth and context flag on the grid) to args.out. Throws
/// npe::Error for unreadable or unsuitable files and models.
int run_predict_grid(const GridPredictArguments& args);

}  // namespace npe::cli
