// The classic-format header walk in front of libnetcdf: headers libnetcdf itself writes pass,
// every cut-off or inflated count is refused before libnetcdf allocates what it claims.

#include <gtest/gtest.h>
#include <netcdf.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "data/netcdf_classic_header.h"
#include "npe/data/gridded_field.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> walk(const std::string& bytes) {
  std::istringstream in(bytes);
  return classic_header_problem(in, bytes.size());
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void ok(int status) {
  ASSERT_EQ(status, NC_NOERR) << nc_strerror(status);
}

// A header-only file as libnetcdf writes it in `format` (NC_CLASSIC_MODEL: CDF-1,
// NC_64BIT_OFFSET: CDF-2, NC_64BIT_DATA: CDF-5): every variable is on the record dimension and
// there are no records, so the file ends where the header does.
std::string header_only_file(int format) {
  const fs::path path =
      fs::temp_directory_path() / ("npe_header_" + std::to_string(format) + ".nc");
  int id = 0, time = 0, lat = 0, lon = 0, var = 0;
  ok(nc_create(path.c_str(), NC_CLOBBER | format, &id));
  ok(nc_def_dim(id, "time", NC_UNLIMITED, &time));
  ok(nc_def_dim(id, "latitude", 3, &lat));
  ok(nc_def_dim(id, "longitude", 4, &lon));
  ok(nc_put_att_text(id, NC_GLOBAL, "Conventions", 6, "CF-1.6"));
  const double range[2] = {-1.5, 2.5};
  ok(nc_put_att_double(id, NC_GLOBAL, "range", NC_DOUBLE, 2, range));
  const int dims[3] = {time, lat, lon};
  ok(nc_def_var(id, "t2m", NC_SHORT, 3, dims, &var));
  ok(nc_put_att_text(id, var, "units", 1, "K"));
  const short fill = -32767;
  ok(nc_put_att_short(id, var, "_FillValue", NC_SHORT, 1, &fill));
  ok(nc_def_var(id, "time", NC_INT, 1, &time, &var));
  ok(nc_close(id));
  auto bytes = read_all(path);
  fs::remove(path);
  return bytes;
}

class ClassicHeader : public ::testing::TestWithParam<int> {};

TEST_P(ClassicHeader, AcceptsWhatLibnetcdfWrites) {
  const auto file = header_only_file(GetParam());
  ASSERT_GT(file.size(), 100u);
  const auto problem = walk(file);
  EXPECT_FALSE(problem.has_value()) << *problem;
}

TEST_P(ClassicHeader, RefusesEveryCutOffHeader) {
  const auto file = header_only_file(GetParam());
  for (size_t length = 4; length < file.size(); ++length)
    EXPECT_TRUE(walk(file.substr(0, length)).has_value()) << "cut at " << length;
}

INSTANTIATE_TEST_SUITE_P(Formats, ClassicHeader,
                         ::testing::Values(NC_CLASSIC_MODEL, NC_64BIT_OFFSET, NC_64BIT_DATA));

TEST(ClassicHeaderCounts, RefusesAVariableCountTheFileCannotHold) {
  auto file = header_only_file(NC_CLASSIC_MODEL);
  // The variable list: tag 0x0000000B, then the count, 2 (big-endian 32 bits; "Conventions",
  // 11 letters, has the same length field as the tag).
  const auto tag = file.find(std::string("\0\0\0\x0b\0\0\0\x02", 8));
  ASSERT_NE(tag, std::string::npos);
  file.replace(tag + 4, 4, std::string("\x08\0\0\x04", 4));  // 134,217,732 variables
  const auto problem = walk(file);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("claims 134217732 variables"), std::string::npos) << *problem;
}

TEST(ClassicHeaderCounts, RefusesADimensionIdThatDoesNotExist) {
  auto file = header_only_file(NC_CLASSIC_MODEL);
  // "t2m" is the first variable: name length 3, "t2m\0", rank 3, then dimension id 0 (time).
  const auto t2m = file.find(std::string("t2m\0\0\0\0\x03", 8));
  ASSERT_NE(t2m, std::string::npos);
  file[t2m + 11] = 9;
  const auto problem = walk(file);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("dimension that does not exist"), std::string::npos) << *problem;
}

TEST(ClassicHeaderCounts, LeavesOtherFormatsToTheirReaders) {
  EXPECT_FALSE(walk("\x89HDF\r\n\x1a\n and the rest").has_value());
  EXPECT_FALSE(walk("GRIB").has_value());
  EXPECT_FALSE(walk("CD").has_value());
}

TEST(ClassicHeaderCounts, TheFuzzFindingIsAClearError) {
  // 618 bytes whose header claims 134,217,732 variables: libnetcdf allocated for them, and
  // where that allocation failed its cleanup dereferenced NULL.
  const fs::path finding = NPE_FUZZ_REGRESSIONS_DIR
      "/gridded_field/fuzz_gridded_field-crash-286b8a2372a78943e81428294a05ba5bd35a6f70";
  NPE_EXPECT_THROW_WITH(read_gridded_field(finding), DataError, "claims 134217732 variables");
}

}  // namespace
}  // namespace npe
