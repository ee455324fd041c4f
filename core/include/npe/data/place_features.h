#pragma once
// Properties of a place that a temperature model may use besides its coordinates: surface
// elevation and land-sea fraction (the paper's ERA5 models take elevation as a fourth input,
// Appendix F.4). They belong to the grid cell, so a translation of the data carries them along.

#include <filesystem>
#include <string>
#include <vector>

#include <torch/types.h>

#include "npe/data/gridded_field.h"

namespace npe {

/// $NPE_ERA5_INVARIANTS, else the shipped ERA5 invariants file (data/era5).
std::filesystem::path default_era5_invariants_path();

/// The features the invariants file provides, in the order they are named:
/// "elevation" (surface geopotential z / g, in kilometres) and "land_sea" (land fraction, 0-1).
const std::vector<std::string>& known_place_features();

/// Features of every cell of a grid: values [lat, lon, F] (float64), in the order of `names`.
struct PlaceFeatures {
  std::vector<std::string> names;
  torch::Tensor values;

  int64_t count() const { return static_cast<int64_t>(names.size()); }
};

/// What to do with cells of the grid that the invariants file does not cover.
enum class UncoveredCells { Refuse, Missing };

/// Reads the named features from `invariants` (NetCDF, variables `z` and `lsm` on latitude and
/// longitude) and aligns them to `grid` by coordinates (within a thousandth of the grid step).
/// Throws ConfigError for an unknown name; DataError naming the file when a cell of the grid is
/// not covered or has no value there, unless `uncovered` is Missing: then such cells' features
/// are NaN (the cells are "no data" for a model that needs them). Reads are cached per file.
PlaceFeatures read_place_features(const std::filesystem::path& invariants,
                                  const std::vector<std::string>& names, const GriddedField& grid,
                                  UncoveredCells uncovered = UncoveredCells::Refuse);

}  // namespace npe
