#pragma once
// Safe use of libnetcdf from several threads and after failed opens; every NetCDF read of the
// project (gridded fields, GSHHG coastlines) goes through here.

#include <filesystem>
#include <mutex>
#include <string>

namespace npe {

/// libnetcdf and Debian's serial HDF5 under it are not thread-safe, and the explorer's map tab,
/// a training job and the CLI may read at the same time: hold this lock from nc_open to
/// nc_close.
std::unique_lock<std::mutex> lock_netcdf();

/// nc_open(path, NC_NOWRITE) for a caller holding lock_netcdf(). A classic-format header is
/// checked first (netcdf_classic_header.h); when the open fails, whatever libnetcdf left open in
/// HDF5 for `path` is closed (see the definition). Returns why the file cannot be opened, or an
/// empty string when `*id` is open.
std::string open_netcdf(const std::filesystem::path& path, int* id);

}  // namespace npe
