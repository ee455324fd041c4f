#include "netcdf_access.h"

#include <hdf5.h>
#include <netcdf.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "data/netcdf_classic_header.h"

namespace npe {
namespace {

std::vector<hid_t> open_ids(hid_t scope, unsigned types) {
  const ssize_t count = H5Fget_obj_count(scope, types);
  if (count <= 0) return {};
  std::vector<hid_t> ids(static_cast<size_t>(count));
  const ssize_t got = H5Fget_obj_ids(scope, types, ids.size(), ids.data());
  ids.resize(static_cast<size_t>(std::max<ssize_t>(0, got)));
  return ids;
}

std::string file_name(hid_t file) {
  const ssize_t length = H5Fget_name(file, nullptr, 0);
  if (length <= 0) return {};
  std::string name(static_cast<size_t>(length) + 1, '\0');
  H5Fget_name(file, name.data(), name.size());
  name.resize(static_cast<size_t>(length));
  return name;
}

// When nc_open fails on a corrupt NetCDF-4 file, libnetcdf can leave the file open in HDF5 (its
// descriptor, metadata and caches). HDF5 recognises a file it already has open, so the next
// open of the same file -- rewritten in place, say, after the user fixed it -- went through that
// stale state, and HDF5 ran for minutes on one such pair of inputs (fuzz_gridded_field). The
// caller holds the lock, so no read in progress owns any of these.
void close_what_a_failed_open_left(const std::filesystem::path& path) {
  for (const hid_t file : open_ids(H5F_OBJ_ALL, H5F_OBJ_FILE)) {
    if (file_name(file) != path.string()) continue;
    // Objects keep their file open after H5Fclose (HDF5's default "weak" close): close them
    // first.
    for (const hid_t object : open_ids(file, H5F_OBJ_DATASET)) H5Dclose(object);
    for (const hid_t object : open_ids(file, H5F_OBJ_GROUP)) H5Gclose(object);
    for (const hid_t object : open_ids(file, H5F_OBJ_DATATYPE)) H5Tclose(object);
    for (const hid_t object : open_ids(file, H5F_OBJ_ATTR)) H5Aclose(object);
    H5Fclose(file);
  }
}

}  // namespace

std::unique_lock<std::mutex> lock_netcdf() {
  static std::mutex netcdf;
  return std::unique_lock<std::mutex>(netcdf);
}

std::string open_netcdf(const std::filesystem::path& path, int* id) {
  // A file that cannot be sized or opened here is left to nc_open, which says why.
  std::error_code size_error;
  const auto size = std::filesystem::file_size(path, size_error);
  if (std::ifstream file(path, std::ios::binary); file && !size_error)
    if (auto problem = classic_header_problem(file, size)) return *problem;
  const int status = nc_open(path.c_str(), NC_NOWRITE, id);
  if (status == NC_NOERR) return {};
  close_what_a_failed_open_left(path);
  return nc_strerror(status);
}

}  // namespace npe
