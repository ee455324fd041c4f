#include "npe/data/place_features.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <torch/torch.h>

#include "npe/data/dataset_cache.h"
#include "npe/errors.h"
#include "npe/shipped_files.h"

namespace npe {
namespace fs = std::filesystem;

namespace {

constexpr double kStandardGravity = 9.80665;  // m s^-2: ERA5's geopotential to metres

struct FeatureSource {
  const char* name;
  const char* variable;  // in the invariants file
  double scale;          // file units to feature units
};

// Elevation in kilometres and the land fraction are both of order one over the British Isles
// and Europe, the scale of the standardised temperature, without statistics to store.
const std::vector<FeatureSource>& feature_sources() {
  static const std::vector<FeatureSource> sources = {
      {"elevation", "z", 1.0 / (kStandardGravity * 1000.0)},
      {"land_sea", "lsm", 1.0},
  };
  return sources;
}

const FeatureSource& feature_source(const std::string& name) {
  for (const auto& s : feature_sources())
    if (name == s.name) return s;
  std::string known;
  for (const auto& s : feature_sources())
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  throw ConfigError("unknown place feature '" + name + "' (known: " + known + ")");
}

// Index of `value` in `axis` within `tolerance`, or -1.
int64_t find_coordinate(const std::vector<double>& axis, double value, double tolerance) {
  for (size_t i = 0; i < axis.size(); ++i)
    if (std::abs(axis[i] - value) <= tolerance) return static_cast<int64_t>(i);
  return -1;
}

// For each coordinate of the data grid, its index on the invariants file's axis; -1 where the
// file does not cover it (when uncovered cells are Missing), else a DataError naming it.
std::vector<int64_t> align_axis(const std::vector<double>& wanted, const std::vector<double>& axis,
                                double tolerance, const char* axis_name, const char* direction,
                                const char* feature, const fs::path& invariants,
                                UncoveredCells uncovered) {
  std::vector<int64_t> index;
  for (double value : wanted) {
    const auto i = find_coordinate(axis, value, tolerance);
    if (i < 0 && uncovered == UncoveredCells::Refuse) {
      const auto [low, high] = std::minmax_element(axis.begin(), axis.end());
      std::ostringstream msg;
      msg << invariants.string() << ": no " << feature << " at " << axis_name << " " << value
          << " (it covers " << *low << " to " << *high << " " << direction << " in steps of "
          << (axis.size() > 1 ? std::abs(axis[1] - axis[0]) : 0.0) << ")";
      throw DataError(msg.str());
    }
    index.push_back(i);
  }
  return index;
}

}  // namespace

fs::path default_era5_invariants_path() {
  if (const char* env = std::getenv("NPE_ERA5_INVARIANTS"); env && *env) return env;
  return shipped_data_file("era5/era5-invariants-europe-0p25.nc");
}

const std::vector<std::string>& known_place_features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& s : feature_sources()) n.push_back(s.name);
    return n;
  }();
  return names;
}

PlaceFeatures read_place_features(const fs::path& invariants, const std::vector<std::string>& names,
                                  const GriddedField& grid, UncoveredCells uncovered) {
  PlaceFeatures features;
  features.names = names;
  const auto rows = grid.num_latitudes(), cols = grid.num_longitudes();
  features.values = torch::zeros({rows, cols, features.count()}, torch::kFloat64);
  // Longitudes are compared modulo 360 (every reader normalises them to [-180, 180)); the
  // tolerance is a thousandth of the data's step, or of a degree for a one-cell grid.
  const double lat_tol = 1e-3 * (grid.latitude_step() > 0 ? grid.latitude_step() : 1.0);
  const double lon_tol = 1e-3 * (grid.longitude_step() > 0 ? grid.longitude_step() : 1.0);
  for (int64_t f = 0; f < features.count(); ++f) {
    const auto& source = feature_source(names[static_cast<size_t>(f)]);
    GriddedReadOptions options;
    options.variable = source.variable;
    options.time_invariant = true;
    const auto field =
        cached_dataset<GriddedField>(invariants, std::string(source.variable) + "\ntime-invariant",
                                     [&] { return read_gridded_field(invariants, options); });
    const auto row_index = align_axis(grid.latitudes, field->latitudes, lat_tol, "latitude", "N",
                                      source.name, invariants, uncovered);
    const auto col_index = align_axis(grid.longitudes, field->longitudes, lon_tol, "longitude", "E",
                                      source.name, invariants, uncovered);
    // Uncovered rows and columns (index -1) read cell 0 and are set to NaN afterwards.
    const auto rows_index = torch::tensor(row_index, torch::kLong);
    const auto cols_index = torch::tensor(col_index, torch::kLong);
    auto values = field->values[0]
                      .to(torch::kFloat64)
                      .index_select(0, rows_index.clamp_min(0))
                      .index_select(1, cols_index.clamp_min(0)) *
                  source.scale;
    const auto covered = (rows_index >= 0).unsqueeze(1).logical_and((cols_index >= 0).unsqueeze(0));
    if (uncovered == UncoveredCells::Refuse && !torch::isfinite(values).all().item<bool>()) {
      throw DataError(invariants.string() + ": " + source.name +
                      " is missing at some cells of the data grid");
    }
    values.masked_fill_(covered.logical_not(), std::nan(""));
    features.values.select(2, f).copy_(values);
  }
  return features;
}

}  // namespace npe
