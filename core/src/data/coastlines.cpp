#include "npe/data/coastlines.h"

#include <netcdf.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "data/netcdf_access.h"
#include "npe/errors.h"

namespace npe {
namespace {

class File {
 public:
  explicit File(const std::filesystem::path& path) : m_path(path) {
    if (const auto error = open_netcdf(path, &m_id); !error.empty()) fail(error);
  }
  ~File() { nc_close(m_id); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(m_path.string() + ": not a readable GSHHG shoreline file (" + problem + ")");
  }
  template <typename T>
  std::vector<T> read(const char* name) const {
    int var = 0, dim = 0, ndims = 0;
    if (nc_inq_varid(m_id, name, &var) || nc_inq_varndims(m_id, var, &ndims) || ndims != 1 ||
        nc_inq_vardimid(m_id, var, &dim)) {
      fail(std::string("no variable ") + name);
    }
    size_t length = 0;
    nc_inq_dimlen(m_id, dim, &length);
    std::vector<T> out(length);
    int status = NC_NOERR;
    if constexpr (std::is_same_v<T, int>) {
      status = nc_get_var_int(m_id, var, out.data());
    } else {
      // Stored as signed shorts holding unsigned 16-bit offsets: read the bits as they are.
      std::vector<short> raw(length);
      status = nc_get_var_short(m_id, var, raw.data());
      for (size_t i = 0; i < length; ++i) out[i] = static_cast<unsigned short>(raw[i]);
    }
    if (status != NC_NOERR) fail(std::string(name) + ": " + nc_strerror(status));
    return out;
  }

 private:
  std::filesystem::path m_path;
  int m_id = -1;
};

}  // namespace

std::filesystem::path default_coastline_file() {
  if (const char* env = std::getenv("NPE_GSHHG_FILE"); env && *env) return env;
  return "/usr/share/gmt-gshhg/binned_GSHHS_l.nc";
}

std::vector<Polyline> read_gshhg_coastlines(const std::filesystem::path& path, double lat_min,
                                            double lat_max, double lon_min, double lon_max,
                                            int max_level) {
  const auto one_read_at_a_time = lock_netcdf();
  File file(path);
  const auto bin_minutes = file.read<int>("Bin_size_in_minutes");
  const auto bins_x = file.read<int>("N_bins_in_360_longitude_range");
  const auto first_segment = file.read<int>("Id_of_first_segment_in_a_bin");
  const auto segment_count = file.read<unsigned short>("N_segments_in_a_bin");
  const auto segment_info = file.read<int>("Embedded_npts_levels_exit_entry_for_a_segment");
  const auto first_point = file.read<int>("Id_of_first_point_in_a_segment");
  const auto dx = file.read<unsigned short>("Relative_longitude_from_SW_corner_of_bin");
  const auto dy = file.read<unsigned short>("Relative_latitude_from_SW_corner_of_bin");
  if (bin_minutes.empty() || bins_x.empty() || bin_minutes[0] <= 0 || bins_x[0] <= 0 ||
      first_segment.size() != segment_count.size()) {
    file.fail("inconsistent bin tables");
  }
  const double size = bin_minutes[0] / 60.0;
  const int nx = bins_x[0];
  auto wrap = [](double lon) { return lon >= 180.0 ? lon - 360.0 : lon; };
  std::vector<Polyline> lines;
  for (size_t b = 0; b < first_segment.size(); ++b) {
    // Bins run west to east from longitude 0 and north to south from latitude 90.
    const size_t column = b % static_cast<size_t>(nx), row = b / static_cast<size_t>(nx);
    const double lon_sw = static_cast<double>(column) * size;
    const double lat_sw = 90.0 - (static_cast<double>(row) + 1.0) * size;
    const double west = wrap(lon_sw);
    if (lat_sw > lat_max || lat_sw + size < lat_min || west > lon_max || west + size < lon_min) {
      continue;
    }
    for (int s = 0; s < segment_count[b]; ++s) {
      // In 64 bits: a corrupt first-segment index near INT_MAX must not overflow.
      const int64_t index = int64_t{first_segment[b]} + s;
      const auto segment = static_cast<size_t>(index);
      if (index < 0 || segment >= segment_info.size() || segment >= first_point.size()) {
        file.fail("segment index out of range");
      }
      // Bits: point count << 9 | level << 6 | exit side << 3 | entry side.
      const int info = segment_info[segment];
      const int points = info >> 9, level = (info >> 6) & 7;
      if (level < 1 || level > max_level) continue;
      const auto start = static_cast<size_t>(first_point[segment]);
      if (points < 2 || start + static_cast<size_t>(points) > dx.size()) continue;
      Polyline line;
      for (int p = 0; p < points; ++p) {
        line.emplace_back(wrap(lon_sw + dx[start + p] / 65535.0 * size),
                          lat_sw + dy[start + p] / 65535.0 * size);
      }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

}  // namespace npe
