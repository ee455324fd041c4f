#pragma once
// The concrete gridded-field readers (registered in gridded_field.cpp) and helpers they share.

#include <memory>
#include <string>
#include <vector>

#include "npe/data/gridded_field.h"

namespace npe::readers {

std::unique_ptr<GriddedReader> make_netcdf_reader();
std::unique_ptr<GriddedReader> make_grib_reader();

/// Puts a field into the normalised layout (latitude descending, longitude ascending in
/// [-180, 180), times ascending) and checks the grid is regular. values: [T, lat, lon].
/// Throws DataError naming the file.
void normalise_layout(GriddedField& field);

/// "file.nc: problem".
[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem);

}  // namespace npe::readers
