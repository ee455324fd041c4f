#include "npe/data/gridded_writer.h"

#include <netcdf.h>
#include <netcdf_mem.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include <torch/torch.h>

#include "npe/atomic_file.h"
#include "npe/errors.h"

namespace npe {
namespace {

// A netCDF call that must succeed; the file is abandoned (nothing written) when one fails.
void check(int status, const std::string& what, const std::filesystem::path& path) {
  if (status != NC_NOERR) {
    throw DataError("cannot write '" + path.string() + "': " + what + ": " + nc_strerror(status));
  }
}

bool valid_name(const std::string& name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

void write_grid_netcdf(const std::filesystem::path& path, const GridOutput& output) {
  const auto rows = static_cast<int64_t>(output.latitudes.size());
  const auto cols = static_cast<int64_t>(output.longitudes.size());
  if (rows < 1 || cols < 1) {
    throw DataError("cannot write '" + path.string() + "': the grid has no cells");
  }
  for (const auto& v : output.variables) {
    if (!valid_name(v.name) || v.name == "time" || v.name == "latitude" || v.name == "longitude") {
      throw DataError("cannot write '" + path.string() + "': invalid variable name '" + v.name +
                      "'");
    }
    if (!v.values.defined() || v.values.dim() != 2 || v.values.size(0) != rows ||
        v.values.size(1) != cols) {
      throw DataError("cannot write '" + path.string() + "': variable '" + v.name +
                      "' does not have the grid's shape " + std::to_string(rows) + " x " +
                      std::to_string(cols));
    }
  }

  // Built in memory (no half-written file can be left behind), then written atomically.
  int nc = -1;
  check(nc_create_mem(path.filename().string().c_str(), NC_64BIT_OFFSET, 1 << 16, &nc),
        "creating the file", path);
  struct Closer {
    int& nc;
    ~Closer() {
      if (nc >= 0) nc_abort(nc);
    }
  } closer{nc};
  auto text = [&](int variable, const char* name, const std::string& value) {
    if (value.empty()) return;
    check(nc_put_att_text(nc, variable, name, value.size(), value.c_str()), name, path);
  };
  int time_dim = 0, lat_dim = 0, lon_dim = 0;
  check(nc_def_dim(nc, "time", 1, &time_dim), "time", path);
  check(nc_def_dim(nc, "latitude", size_t(rows), &lat_dim), "latitude", path);
  check(nc_def_dim(nc, "longitude", size_t(cols), &lon_dim), "longitude", path);
  int time_var = 0, lat_var = 0, lon_var = 0;
  check(nc_def_var(nc, "time", NC_DOUBLE, 1, &time_dim, &time_var), "time", path);
  text(time_var, "standard_name", "time");
  text(time_var, "units", "seconds since 1970-01-01 00:00:00");
  text(time_var, "calendar", "proleptic_gregorian");
  text(time_var, "axis", "T");
  check(nc_def_var(nc, "latitude", NC_DOUBLE, 1, &lat_dim, &lat_var), "latitude", path);
  text(lat_var, "standard_name", "latitude");
  text(lat_var, "long_name", "latitude");
  text(lat_var, "units", "degrees_north");
  text(lat_var, "axis", "Y");
  check(nc_def_var(nc, "longitude", NC_DOUBLE, 1, &lon_dim, &lon_var), "longitude", path);
  text(lon_var, "standard_name", "longitude");
  text(lon_var, "long_name", "longitude");
  text(lon_var, "units", "degrees_east");
  text(lon_var, "axis", "X");
  const int dims[3] = {time_dim, lat_dim, lon_dim};
  std::vector<int> ids;
  const float fill = std::numeric_limits<float>::quiet_NaN();
  for (const auto& v : output.variables) {
    int id = 0;
    check(nc_def_var(nc, v.name.c_str(), NC_FLOAT, 3, dims, &id), v.name, path);
    check(nc_put_att_float(nc, id, "_FillValue", NC_FLOAT, 1, &fill), v.name, path);
    text(id, "standard_name", v.standard_name);
    text(id, "long_name", v.long_name);
    text(id, "units", v.units);
    ids.push_back(id);
  }
  text(NC_GLOBAL, "Conventions", "CF-1.8");
  text(NC_GLOBAL, "title", output.title);
  text(NC_GLOBAL, "source", output.source);
  text(NC_GLOBAL, "history", output.history);
  check(nc_enddef(nc), "ending the definitions", path);

  const double time = static_cast<double>(output.valid_time);
  check(nc_put_var_double(nc, time_var, &time), "time", path);
  check(nc_put_var_double(nc, lat_var, output.latitudes.data()), "latitude", path);
  check(nc_put_var_double(nc, lon_var, output.longitudes.data()), "longitude", path);
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto values = output.variables[i].values.to(torch::kCPU, torch::kFloat32).contiguous();
    check(nc_put_var_float(nc, ids[i], values.data_ptr<float>()), output.variables[i].name, path);
  }
  NC_memio memory{};
  const int closing = nc_close_memio(nc, &memory);
  nc = -1;  // closed (or failed closing): nothing left to abort
  check(closing, "finishing the file", path);
  std::string bytes(static_cast<const char*>(memory.memory), memory.size);
  std::free(memory.memory);
  try {
    write_file_atomically(path, bytes);
  } catch (const Error& e) {
    throw DataError(e.what());
  }
}

}  // namespace npe
