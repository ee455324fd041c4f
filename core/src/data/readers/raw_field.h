#pragma once
// A gridded field as a reader takes it from a file, before any tensor exists, and the child
// process that readers run third-party libraries in.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "data/child_process.h"
#include "npe/data/gridded_field.h"

namespace npe::readers {

/// Built with the file-format library alone, so that a child process can build it (libtorch's
/// threads do not exist there).
struct RawField {
  std::string variable, units, long_name;
  std::vector<int64_t> shape;  ///< three dimensions (time, latitude, longitude in some order)
  std::vector<int64_t> axes;   ///< positions of time, latitude, longitude in `shape`
  std::vector<double> values;  ///< unpacked, missing values NaN, in `shape`'s order
  std::vector<int64_t> valid_times;
  std::vector<double> latitudes, longitudes;
  std::vector<GriddedVariable> file_variables;  ///< GriddedField::file_variables
  bool variable_chosen = false;                 ///< GriddedField::variable_chosen
};

/// The field in the normalised layout (normalise_layout); throws DataError naming the file.
GriddedField to_field(RawField raw, const std::filesystem::path& path);

/// Runs `read` in a child process and returns what it built. `library` names what runs there
/// for the messages ("ecCodes"). The DataError `read` throws reaches the caller as it is; a
/// crash, or no progress for options.stall_limit, becomes a DataError that says so.
RawField read_in_child(const std::filesystem::path& path, const GriddedReadOptions& options,
                       const std::string& library,
                       const std::function<RawField(ChildChannel&)>& read);

}  // namespace npe::readers
