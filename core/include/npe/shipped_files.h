#pragma once
// Finding what the project ships beside its programs: the pretrained models (models/) and the
// data the tabs open (data/), in a source tree, a build tree, an installed or an unpacked package.

#include <filesystem>
#include <string>
#include <vector>

namespace npe {

/// The existing folders that may hold the shipped `kind` ("models", "data"), in the order they
/// are searched: $`environment` (if set and not empty), ../share/np-explorer/<kind> relative to
/// the running executable (an installed or unpacked package uses its own files even where a
/// source tree exists; a build tree has none there and falls through), the source tree's
/// <kind>/ (programs run from a build tree), and the configured install prefix's
/// share/np-explorer/<kind>.
std::vector<std::filesystem::path> shipped_file_dirs(const std::string& kind,
                                                     const char* environment);

/// The first existing `relative` path (e.g. "era5/era5-t2m-2019-03-uk.nc") under the shipped
/// data folders (shipped_file_dirs("data", "NPE_DATA_DIR")); when none has it, the path it would
/// have in the first candidate folder, so that the "no such file" a reader reports names a place
/// the user can check.
std::filesystem::path shipped_data_file(const std::filesystem::path& relative);

/// The folders shipped_data_file searched, for messages ("looked in A, B").
std::string describe_shipped_data_dirs();

}  // namespace npe
