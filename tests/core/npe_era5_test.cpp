// Gridded readers (NetCDF, GRIB) on the shared ERA5 files and on variant files the tests write,
// and the ERA5 task source: split, standardisation, models and baselines on its tasks.

#include <eccodes.h>
#include <netcdf.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "npe/data/era5_scene.h"
#include "npe/data/era5_tasks.h"
#include "npe/data/grid_prediction.h"
#include "npe/data/gridded_field.h"
#include "npe/data/gridded_writer.h"
#include "npe/data/place_features.h"
#include "npe/data/task_registry.h"
#include "npe/ground/prediction.h"
#include "npe/models/model_catalog.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/predictor_registry.h"
#include "test_support.h"

namespace npe {
namespace {
namespace fs = std::filesystem;

fs::path netcdf_file() {
  return default_era5_path();
}
fs::path grib_file() {
  return default_era5_path().parent_path() / "era5-t2m-2019-03-uk.grib";
}

// The data ships in data/era5 (a clone is whole): a missing file fails the test, never skips it.
// The tasks' default configuration also reads the invariants file (elevation, land fraction).
#define REQUIRE_ERA5()                                                                        \
  ASSERT_TRUE(fs::exists(netcdf_file()) && fs::exists(grib_file()) &&                         \
              fs::exists(default_era5_invariants_path()))                                     \
      << "the shipped ERA5 data is missing: " << netcdf_file() << ", " << grib_file() << ", " \
      << default_era5_invariants_path() << " (data/era5 of the source tree)"

// An input fuzz_gridded_field found, kept in tests/fuzz/regressions/gridded_field.
fs::path gridded_regression(const std::string& name) {
  return fs::path(NPE_FUZZ_REGRESSIONS_DIR) / "gridded_field" / name;
}

class Era5Files : public testing::SeededTest {
 protected:
  fs::path scratch(const std::string& name) {
    auto dir = fs::temp_directory_path() / ("npe-era5-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir / name;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(fs::temp_directory_path() / ("npe-era5-test-" + std::to_string(::getpid())), ec);
  }
};

void check(int status) {
  ASSERT_EQ(status, NC_NOERR) << nc_strerror(status);
}

// File dialogs and drag and drop take their suffixes from the readers: every reader declares
// some, lower case without a dot, and no two readers claim the same one.
TEST(GriddedReaders, DeclareTheirSuffixes) {
  std::set<std::string> seen;
  for (const auto& reader : gridded_readers()) {
    ASSERT_FALSE(reader->suffixes().empty()) << reader->format_name();
    for (const auto& suffix : reader->suffixes()) {
      EXPECT_TRUE(seen.insert(suffix).second) << suffix;
      EXPECT_EQ(suffix.find('.'), std::string::npos) << suffix;
      for (char c : suffix) EXPECT_FALSE(std::isupper(static_cast<unsigned char>(c))) << suffix;
    }
  }
  const auto all = gridded_suffixes();
  EXPECT_EQ(all.size(), seen.size());
  for (const char* expected : {"nc", "grib", "grib2"})
    EXPECT_TRUE(seen.count(expected)) << expected;
}

TEST_F(Era5Files, NetcdfAndGribGiveTheSameField) {
  REQUIRE_ERA5();
  const auto nc = read_gridded_field(netcdf_file());
  const auto grib = read_gridded_field(grib_file());
  ASSERT_EQ(nc.values.sizes(), (std::vector<int64_t>{744, 33, 49}));
  ASSERT_EQ(grib.values.sizes(), nc.values.sizes());
  EXPECT_EQ(nc.latitudes, grib.latitudes);
  EXPECT_EQ(nc.longitudes, grib.longitudes);
  EXPECT_EQ(nc.valid_times, grib.valid_times);
  EXPECT_DOUBLE_EQ(nc.latitudes.front(), 58.0);
  EXPECT_DOUBLE_EQ(nc.latitudes.back(), 50.0);
  EXPECT_DOUBLE_EQ(nc.longitudes.front(), -10.0);
  EXPECT_DOUBLE_EQ(nc.longitudes.back(), 2.0);
  EXPECT_DOUBLE_EQ(nc.latitude_step(), 0.25);
  EXPECT_EQ(format_utc(nc.valid_times.front()), "2019-03-01 00:00 UTC");
  EXPECT_EQ(format_utc(nc.valid_times.back()), "2019-03-31 23:00 UTC");
  EXPECT_EQ(nc.variable, "t2m");
  EXPECT_EQ(grib.variable, "2t");
  EXPECT_EQ(nc.units, "K");
  EXPECT_EQ(grib.units, "K");
  EXPECT_FALSE(torch::isnan(nc.values).any().item<bool>());
  // Both files hold the same temperatures, each quantised by its own packing: the NetCDF file
  // stores shorts with a scale factor of about 3.7e-4 K, so they agree to half of that.
  EXPECT_LE(testing::max_abs_diff(nc.values, grib.values), 1.9e-4);
  EXPECT_GT(nc.values.min().item<double>(), 260.0);
  EXPECT_LT(nc.values.max().item<double>(), 295.0);
}

TEST_F(Era5Files, KnownValuesAtKnownCellsAndTimes) {
  REQUIRE_ERA5();
  const auto field = read_gridded_field(netcdf_file());
  // Read single packed values straight from the file with libnetcdf and unpack them by hand.
  int id = 0, var = 0;
  check(nc_open(netcdf_file().c_str(), NC_NOWRITE, &id));
  check(nc_inq_varid(id, "t2m", &var));
  double scale = 0, offset = 0;
  check(nc_get_att_double(id, var, "scale_factor", &scale));
  check(nc_get_att_double(id, var, "add_offset", &offset));
  struct Probe {
    size_t time, row, col;
  };
  for (auto p : {Probe{0, 0, 0}, Probe{100, 24, 36}, Probe{743, 32, 48}, Probe{371, 16, 24}}) {
    size_t index[3] = {p.time, p.row, p.col};
    short raw = 0;
    check(nc_get_var1_short(id, var, index, &raw));
    EXPECT_NEAR(field.values[p.time][p.row][p.col].item<double>(), raw * scale + offset, 1e-4)
        << "time " << p.time << " row " << p.row << " col " << p.col;
  }
  nc_close(id);
  // 2019-03-01 00:00 UTC at 58 N, 10 W (the grid's north-west corner).
  EXPECT_NEAR(field.values[0][0][0].item<double>(), 282.425, 1e-3);
  EXPECT_EQ(format_utc(field.valid_times[100]), "2019-03-05 04:00 UTC");
}

// A NetCDF file unlike ERA5's: ascending latitude, float values, another variable name, time in
// days, missing values flagged by _FillValue.
TEST_F(Era5Files, NetcdfVariantLayoutsLoad) {
  const auto path = scratch("variant.nc");
  int id = 0, dims[3], lat_var, lon_var, time_var, var;
  check(nc_create(path.c_str(), NC_CLOBBER | NC_NETCDF4, &id));
  check(nc_def_dim(id, "time", 2, &dims[0]));
  check(nc_def_dim(id, "lat", 3, &dims[1]));
  check(nc_def_dim(id, "lon", 4, &dims[2]));
  check(nc_def_var(id, "time", NC_DOUBLE, 1, &dims[0], &time_var));
  check(nc_def_var(id, "lat", NC_DOUBLE, 1, &dims[1], &lat_var));
  check(nc_def_var(id, "lon", NC_DOUBLE, 1, &dims[2], &lon_var));
  check(nc_def_var(id, "temperature", NC_FLOAT, 3, dims, &var));
  const char* units = "days since 2019-03-01";
  check(nc_put_att_text(id, time_var, "units", std::strlen(units), units));
  check(nc_put_att_text(id, lat_var, "units", 13, "degrees_north"));
  check(nc_put_att_text(id, lon_var, "units", 12, "degrees_east"));
  check(nc_put_att_text(id, var, "units", 4, "degC"));
  const float fill = -999.0f;
  check(nc_put_att_float(id, var, "_FillValue", NC_FLOAT, 1, &fill));
  check(nc_enddef(id));
  const double times[2] = {0.0, 0.25}, lats[3] = {50.0, 50.5, 51.0};
  const double lons[4] = {358.0, 358.5, 359.0, 359.5};  // 0..360 longitudes
  float values[2][3][4];
  for (int t = 0; t < 2; ++t)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) values[t][r][c] = static_cast<float>(100 * t + 10 * r + c);
  values[1][2][3] = fill;
  check(nc_put_var_double(id, time_var, times));
  check(nc_put_var_double(id, lat_var, lats));
  check(nc_put_var_double(id, lon_var, lons));
  check(nc_put_var_float(id, var, &values[0][0][0]));
  check(nc_close(id));

  const auto field = read_gridded_field(path);
  EXPECT_EQ(field.variable, "temperature");
  EXPECT_EQ(field.units, "degC");
  EXPECT_EQ(field.latitudes, (std::vector<double>{51.0, 50.5, 50.0}));  // normalised: north first
  EXPECT_EQ(field.longitudes, (std::vector<double>{-2.0, -1.5, -1.0, -0.5}));
  EXPECT_EQ(format_utc(field.valid_times[1]), "2019-03-01 06:00 UTC");
  // Row 0 is now the file's last (northernmost) row.
  EXPECT_FLOAT_EQ(field.values[0][0][1].item<float>(), 21.0f);
  EXPECT_FLOAT_EQ(field.values[1][2][0].item<float>(), 100.0f);
  EXPECT_TRUE(std::isnan(field.values[1][0][3].item<float>()));
  EXPECT_EQ(torch::isnan(field.values).sum().item<int64_t>(), 1);
  // Variables are chosen by name, and a wrong name is an error that lists the variables.
  EXPECT_EQ(read_gridded_field(path, {"temperature"}).variable, "temperature");
  try {
    read_gridded_field(path, {"t2m"});
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no variable 't2m'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("temperature"), std::string::npos) << e.what();
  }
}

void expect_data_error(const fs::path& path, const std::string& fragment) {
  try {
    read_gridded_field(path);
    ADD_FAILURE() << "expected a DataError for " << path;
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

// Forcing files and climatologies hold several gridded variables: the first in a temperature
// unit is read, and the field says so and lists them all; with none in a temperature unit the
// reader lists them with their units.
TEST_F(Era5Files, TheTemperatureIsChosenAmongSeveralVariables) {
  GridOutput grid;
  // 20 × 20 cells: a whole-file task's window (15 × 15) fits.
  for (int i = 0; i < 20; ++i) {
    grid.latitudes.push_back(50.0 - 0.5 * i);
    grid.longitudes.push_back(0.5 * i);
  }
  grid.valid_time = utc_seconds(2018, 7, 1);
  auto values = torch::arange(400, torch::kFloat64).view({20, 20}) / 20.0;
  grid.variables = {{"Qair", "specific humidity", "kg kg-1", "", values * 1e-3},
                    {"Tair", "air temperature", "K", "air_temperature", values + 280.0}};
  const auto forcing = scratch("forcing.nc");
  write_grid_netcdf(forcing, grid);
  const auto field = read_gridded_field(forcing);
  EXPECT_EQ(field.variable, "Tair");
  EXPECT_TRUE(field.variable_chosen);
  ASSERT_EQ(field.file_variables.size(), 2u);
  EXPECT_EQ(field.file_variables[0].units, "kg kg-1");
  EXPECT_FLOAT_EQ(field.values[0][1][2].item<float>(), 281.1f);
  EXPECT_NE(describe_variable_choice(field).find("read Tair (air temperature, K), the first in a "
                                                 "temperature unit; the others: Qair [kg kg-1]"),
            std::string::npos)
      << describe_variable_choice(field);

  grid.variables.push_back({"Tmax", "daily maximum", "DEG C", "", values + 10.0});
  const auto two = scratch("two-temperatures.nc");
  write_grid_netcdf(two, grid);
  const auto first = read_gridded_field(two);
  EXPECT_EQ(first.variable, "Tair");
  const auto ordered = temperatures_first(first.file_variables);
  ASSERT_EQ(ordered.size(), 3u);
  EXPECT_EQ(ordered[0].name + ordered[1].name + ordered[2].name, "TairTmaxQair");
  const auto named = read_gridded_field(two, {"Tmax"});
  EXPECT_EQ(named.variable, "Tmax");
  EXPECT_FALSE(named.variable_chosen);
  EXPECT_EQ(describe_variable_choice(named), "");
  // Read through the tasks, "DEG C" is converted to kelvin (the models' unit).
  Era5TaskConfig config;
  config.features = {};
  const Era5TaskSource tmax(config.reading(two, "Tmax"));
  EXPECT_NEAR(tmax.field().values[0][1][2].item<float>(), 1.1 + 10.0 + 273.15, 1e-4);
  // Chosen by the tasks, the choice names the file's unit, not the kelvin the task holds.
  auto celsius_grid = grid;
  celsius_grid.variables.erase(celsius_grid.variables.begin() + 1);  // Qair, Tmax [DEG C]
  const auto celsius_first = scratch("celsius-first.nc");
  write_grid_netcdf(celsius_first, celsius_grid);
  const Era5TaskSource chosen(config.reading(celsius_first, ""));
  EXPECT_EQ(chosen.field().units, "K");
  EXPECT_NE(describe_variable_choice(chosen.field()).find("read Tmax (daily maximum, DEG C)"),
            std::string::npos)
      << describe_variable_choice(chosen.field());

  grid.variables = {{"Qair", "specific humidity", "kg kg-1", "", values * 1e-3},
                    {"Wind", "wind speed", "m s-1", "", values}};
  const auto none = scratch("no-temperature.nc");
  write_grid_netcdf(none, grid);
  expect_data_error(none,
                    "none of its 2 gridded variables is in a temperature unit (Qair "
                    "[kg kg-1], Wind [m s-1])");
  // One variable in no temperature unit reads as a field, and the tasks refuse it with its unit,
  // never taking it for kelvin.
  grid.variables.pop_back();
  grid.variables.back().units = "m s-1";
  const auto wind = scratch("wind.nc");
  write_grid_netcdf(wind, grid);
  EXPECT_EQ(read_gridded_field(wind).variable, "Qair");
  try {
    Era5TaskSource refused(config.reading(wind, ""));
    ADD_FAILURE() << "expected a DataError";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("variable 'Qair' is in 'm s-1'"), std::string::npos) << message;
    EXPECT_NE(message.find("not a temperature"), std::string::npos) << message;
    EXPECT_NE(message.find(wind.string()), std::string::npos) << message;
  }
}

// GRIB messages of the given variables (ecCodes' short names), one per hour from 2019-03-01, on
// the grid of ecCodes' regular latitude/longitude sample.
void write_grib_messages(const fs::path& path, const std::vector<std::string>& short_names) {
  std::ofstream out(path, std::ios::binary);
  long hour = 0;
  for (const auto& name : short_names) {
    codes_handle* h = codes_grib_handle_new_from_samples(nullptr, "regular_ll_sfc_grib2");
    ASSERT_NE(h, nullptr);
    ASSERT_EQ(codes_set_string(h, "shortName", name.c_str(), nullptr), 0) << name;
    ASSERT_EQ(codes_set_long(h, "dataDate", 20190301), 0);
    ASSERT_EQ(codes_set_long(h, "dataTime", 100 * hour++), 0);
    const void* message = nullptr;
    size_t size = 0;
    ASSERT_EQ(codes_get_message(h, &message, &size), 0);
    out.write(static_cast<const char*>(message), static_cast<std::streamsize>(size));
    codes_handle_delete(h);
  }
}

// GRIB files of several variables: the first in a temperature unit is read (messages of another
// variable before it are dropped), and a file with none says what it holds.
TEST_F(Era5Files, GribMessagesOfSeveralVariablesGiveTheTemperature) {
  const auto mixed = scratch("mixed.grib");
  write_grib_messages(mixed, {"10u", "2t", "10u", "2t"});
  const auto field = read_gridded_field(mixed);
  EXPECT_EQ(field.variable, "2t");
  EXPECT_EQ(field.units, "K");
  EXPECT_TRUE(field.variable_chosen);
  EXPECT_EQ(field.num_times(), 2);
  EXPECT_EQ(format_utc(field.valid_times[0]), "2019-03-01 01:00 UTC");
  ASSERT_EQ(field.file_variables.size(), 2u);
  EXPECT_EQ(field.file_variables[0].name, "10u");
  EXPECT_EQ(read_gridded_field(mixed, {"10u"}).num_times(), 2);
  const auto none = scratch("winds.grib");
  write_grib_messages(none, {"10u", "10v"});
  expect_data_error(none,
                    "none of its 2 variables is in a temperature unit (10u [m s**-1], "
                    "10v [m s**-1])");
}

void copy_prefix(const fs::path& from, const fs::path& to, std::streamsize bytes) {
  std::ifstream in(from, std::ios::binary);
  std::string data(static_cast<size_t>(bytes), '\0');
  in.read(data.data(), bytes);
  std::ofstream(to, std::ios::binary).write(data.data(), in.gcount());
}

TEST_F(Era5Files, CorruptTruncatedAndUnsupportedFilesGiveClearErrors) {
  expect_data_error(scratch("missing.nc"), "no such file");
  const auto empty = scratch("empty.grib");
  std::ofstream(empty).close();
  expect_data_error(empty, "empty");
  const auto text = scratch("notes.nc");
  std::ofstream(text) << "not a data file at all";
  expect_data_error(text, "not a recognised gridded-data file");
  // A GRIB 2 header claiming 2^48 bytes: ecCodes would allocate that much before reading
  // (fuzz_gridded_field found it); the reader refuses the file first.
  const auto huge = scratch("huge.grib");
  std::string header = std::string("GRIB\xff\xff\x00\x02", 8) + std::string(2, '\0') +
                       std::string(6, '\xff') + std::string(64, '\x07');
  std::ofstream(huge, std::ios::binary) << header;
  expect_data_error(huge, "claims");
  // GRIB on a reduced Gaussian grid, written from ecCodes' own sample.
  const auto reduced = scratch("reduced.grib");
  codes_handle* h = codes_grib_handle_new_from_samples(nullptr, "reduced_gg_pl_32_grib2");
  ASSERT_NE(h, nullptr);
  const void* message = nullptr;
  size_t size = 0;
  ASSERT_EQ(codes_get_message(h, &message, &size), 0);
  std::ofstream(reduced, std::ios::binary)
      .write(static_cast<const char*>(message), static_cast<std::streamsize>(size));
  codes_handle_delete(h);
  expect_data_error(reduced, "unsupported grid type 'reduced_gg'");
  if (!fs::exists(netcdf_file()) || !fs::exists(grib_file())) return;
  // Cut in the middle of the data.
  const auto nc = scratch("truncated.nc");
  copy_prefix(netcdf_file(), nc, 1000000);
  expect_data_error(nc, "");
  const auto grib = scratch("truncated.grib");
  copy_prefix(grib_file(), grib, 3 * 3360 + 1000);  // messages are 3,360 bytes
  expect_data_error(grib, "truncated");
  // Cut inside the header.
  copy_prefix(netcdf_file(), nc, 200);
  expect_data_error(nc, "");
}

// A classic NetCDF file of 2 x 2 cells at the given times, in the given time units.
void write_times_file(const fs::path& path, const std::string& units,
                      const std::vector<double>& times) {
  int id = 0, dims[3], time_var, lat_var, lon_var, var;
  check(nc_create(path.c_str(), NC_CLOBBER, &id));
  check(nc_def_dim(id, "time", times.size(), &dims[0]));
  check(nc_def_dim(id, "latitude", 2, &dims[1]));
  check(nc_def_dim(id, "longitude", 2, &dims[2]));
  check(nc_def_var(id, "time", NC_DOUBLE, 1, &dims[0], &time_var));
  check(nc_def_var(id, "latitude", NC_DOUBLE, 1, &dims[1], &lat_var));
  check(nc_def_var(id, "longitude", NC_DOUBLE, 1, &dims[2], &lon_var));
  check(nc_def_var(id, "t2m", NC_FLOAT, 3, dims, &var));
  check(nc_put_att_text(id, time_var, "units", units.size(), units.c_str()));
  check(nc_enddef(id));
  const double lats[2] = {51.0, 50.0}, lons[2] = {0.0, 1.0};
  const std::vector<float> values(times.size() * 4, 280.0f);
  check(nc_put_var_double(id, time_var, times.data()));
  check(nc_put_var_double(id, lat_var, lats));
  check(nc_put_var_double(id, lon_var, lons));
  check(nc_put_var_float(id, var, values.data()));
  check(nc_close(id));
}

TEST_F(Era5Files, TimesOutsideAnyCalendarAreRefusedNotOverflowed) {
  // fuzz_gridded_field: a time value whose seconds from the reference date do not fit in 64
  // bits; adding it to the reference was a signed overflow (UBSan, netcdf_reader.cpp).
  expect_data_error(
      gridded_regression(
          "fuzz_gridded_field-crash-time-overflow-netcdf-b16c2b90d840fbc73390e24a6ab42b8d89dbcff6"),
      "a time value lies more than 100000 years from the reference date");
  const auto path = scratch("times.nc");
  write_times_file(path, "hours since 1900-01-01", {0.0, 1e300});
  expect_data_error(path, "a time value lies more than 100000 years from the reference date");
  write_times_file(path, "days since 1900-01-01", {0.0, -36525000.5});
  expect_data_error(path, "a time value lies more than 100000 years from the reference date");
  // The reference date's parts are bounded too: its seconds become an int.
  for (const char* units : {"seconds since 1900-01-01 00:00:1e300", "days since 200000-01-01",
                            "days since 1900-01-01 25:00:00", "days since 1900-01-01 00:60:00"}) {
    SCOPED_TRACE(units);
    write_times_file(path, units, {0.0, 1.0});
    expect_data_error(path, "cannot read the reference date");
  }
  // Far from 1970 but in range: days since year 1, as some climate datasets count.
  write_times_file(path, "days since 0001-01-01 00:00:00", {738000.0, 738000.5});
  const auto field = read_gridded_field(path);
  EXPECT_EQ(format_utc(field.valid_times[0]), "2021-07-30 00:00 UTC");
  EXPECT_EQ(format_utc(field.valid_times[1]), "2021-07-30 12:00 UTC");
}

// A NetCDF-4 file declaring a t2m field on dimensions of these lengths, with no data written:
// HDF5 stores none, so the file is a few KB whatever the lengths.
void write_declared_file(const fs::path& path, size_t times, size_t latitudes, size_t longitudes) {
  int id = 0, dims[3], vars[3], var;
  check(nc_create(path.c_str(), NC_CLOBBER | NC_NETCDF4, &id));
  check(nc_def_dim(id, "time", times, &dims[0]));
  check(nc_def_dim(id, "latitude", latitudes, &dims[1]));
  check(nc_def_dim(id, "longitude", longitudes, &dims[2]));
  const char* names[3] = {"time", "latitude", "longitude"};
  for (int i = 0; i < 3; ++i) check(nc_def_var(id, names[i], NC_DOUBLE, 1, &dims[i], &vars[i]));
  check(nc_def_var(id, "t2m", NC_FLOAT, 3, dims, &var));
  const std::string units = "hours since 1900-01-01";
  check(nc_put_att_text(id, vars[0], "units", units.size(), units.c_str()));
  check(nc_close(id));
  ASSERT_LT(fs::file_size(path), 100'000u);
}

TEST_F(Era5Files, DeclaredSizesAreCheckedBeforeAnythingIsRead) {
  const auto path = scratch("declared.nc");
  // 2^40 x 2^24 values wrapped to 0 in a 64-bit count, which passed the value limit; 2^40 time
  // values were then read (8 TB).
  write_declared_file(path, size_t{1} << 40, size_t{1} << 24, 1);
  expect_data_error(path, "the field holds more than 2^64 values");
  write_declared_file(path, size_t{1} << 20, size_t{1} << 20, 1);
  expect_data_error(path, "the field holds 1099511627776 values");
  // An empty axis makes the count 0 whatever the others' lengths.
  write_declared_file(path, size_t{1} << 40, 0, 1);
  expect_data_error(path, "variable 't2m' has an empty dimension 'latitude'");
}

// A t2m file of 1 time, 2 latitudes and 5000 longitudes, with every coordinate written, in which
// the coordinate variable `misplaced` lies on the dimensions `on` (by name) instead of its own.
void write_misplaced_coordinate_file(const fs::path& path, int format, const std::string& misplaced,
                                     const std::vector<std::string>& on) {
  const std::map<std::string, size_t> lengths = {{"time", 1}, {"latitude", 2}, {"longitude", 5000}};
  const std::map<std::string, std::string> units = {{"time", "hours since 1900-01-01"},
                                                    {"latitude", "degrees_north"},
                                                    {"longitude", "degrees_east"}};
  int id = 0, var = 0;
  std::map<std::string, int> dims, vars;
  check(nc_create(path.c_str(), NC_CLOBBER | format, &id));
  for (const char* name : {"time", "latitude", "longitude"})
    check(nc_def_dim(id, name, lengths.at(name), &dims[name]));
  for (const char* name : {"time", "latitude", "longitude"}) {
    std::vector<int> var_dims;
    for (const auto& dim : name == misplaced ? on : std::vector<std::string>{name})
      var_dims.push_back(dims.at(dim));
    check(nc_def_var(id, name, NC_DOUBLE, static_cast<int>(var_dims.size()), var_dims.data(),
                     &vars[name]));
    check(nc_put_att_text(id, vars[name], "units", units.at(name).size(), units.at(name).c_str()));
  }
  const int field_dims[3] = {dims["time"], dims["latitude"], dims["longitude"]};
  check(nc_def_var(id, "t2m", NC_FLOAT, 3, field_dims, &var));
  check(nc_enddef(id));
  for (const char* name : {"time", "latitude", "longitude"}) {
    size_t count = 1;
    for (const auto& dim : name == misplaced ? on : std::vector<std::string>{name})
      count *= lengths.at(dim);
    std::vector<double> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = 0.01 * static_cast<double>(i);  // a regular grid
    check(nc_put_var_double(id, vars[name], values.data()));
  }
  check(nc_put_var_float(id, var, std::vector<float>(2 * 5000, 280.0f).data()));
  check(nc_close(id));
}

TEST_F(Era5Files, ACoordinateVariableMustLieOnItsOwnDimension) {
  // libnetcdf writes a whole variable into the buffer it is given: a latitude declared on the
  // longitude dimension wrote 5000 values into room for 2 (heap corruption; found by reading).
  const auto path = scratch("misplaced.nc");
  for (int format : {0, NC_NETCDF4}) {
    SCOPED_TRACE(format == 0 ? "classic" : "NetCDF-4");
    write_misplaced_coordinate_file(path, format, "latitude", {"longitude"});
    expect_data_error(path, "coordinate variable 'latitude' is not on the dimension 'latitude'");
    write_misplaced_coordinate_file(path, format, "latitude", {"latitude", "longitude"});
    expect_data_error(path, "coordinate variable 'latitude' is not on the dimension 'latitude'");
    write_misplaced_coordinate_file(path, format, "time", {"longitude"});
    expect_data_error(path, "coordinate variable 'time' is not on the dimension 'time'");
    write_misplaced_coordinate_file(path, format, "longitude", {"latitude"});
    expect_data_error(path, "coordinate variable 'longitude' is not on the dimension 'longitude'");
    // Each coordinate on its own dimension, the same file reads.
    write_misplaced_coordinate_file(path, format, "", {});
    EXPECT_EQ(read_gridded_field(path).longitudes.size(), 5000u);
  }
}

// Descriptors of this process open on `path`.
int descriptors_open_on(const fs::path& path) {
  int count = 0;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator("/proc/self/fd", ec)) {
    std::error_code link_error;
    if (fs::read_symlink(fd.path(), link_error) == path) ++count;
  }
  return count;
}

TEST_F(Era5Files, AFailedNetcdfOpenLeavesNothingOpenForTheNextRead) {
  // Two corrupt NetCDF-4 files found by fuzz_gridded_field, read one after the other at the same
  // path, the second written over the first (as when a user fixes a file and opens it again).
  // libnetcdf's failed open of the first left the file open in HDF5, and HDF5 then read the
  // second through that stale state for minutes.
  const fs::path regressions = NPE_FUZZ_REGRESSIONS_DIR "/gridded_field";
  const auto leaves_open =
      regressions / "fuzz_gridded_field-leak-be4d5cd66954ad4acc547298d22afd9758a5dddb";
  const auto next =
      regressions / ("fuzz_gridded_field-leak-be4d5cd66954ad4acc547298d22afd9758a5dddb"
                     "-then-timeout-7b5df8968963bd6f98e8f58eda40dcf7dc8dcfee");
  const auto path = fs::canonical(scratch(".")) / "rewritten.nc";
  copy_prefix(leaves_open, path, 1 << 20);
  expect_data_error(path, "HDF error");
  EXPECT_EQ(descriptors_open_on(path), 0) << "the failed open left " << path << " open";
  copy_prefix(next, path, 1 << 20);  // in place: same inode
  try {
    read_gridded_field(path);
  } catch (const DataError&) {
  }
  EXPECT_EQ(descriptors_open_on(path), 0);
}

TEST_F(Era5Files, AReadThatHangsInHdf5IsStoppedAndReported) {
  // A corrupt NetCDF-4 file found by fuzz_gridded_field on which HDF5 never returns (reading the
  // variable's dimension scales); NetCDF-4 files are read in a child process that is stopped
  // when it makes no progress.
  const fs::path hangs =
      gridded_regression("fuzz_gridded_field-timeout-9463371baf3e9c5677aaebd4f46d46d52fee24b8");
  GriddedReadOptions options;
  options.stall_limit = std::chrono::milliseconds(1500);
  NPE_EXPECT_THROW_WITH(read_gridded_field(hangs, options), DataError, "no progress for 1.5 s");
  // The process can still read NetCDF files afterwards: nothing is left holding the library.
  REQUIRE_ERA5();
  EXPECT_GT(read_gridded_field(netcdf_file()).num_times(), 0);
}

TEST_F(Era5Files, ACrashInEcCodesIsReportedAndTheProgramGoesOn) {
  // A corrupt GRIB 1 message on which ecCodes divides by zero (SIGFPE) converting step units;
  // found by fuzz_gridded_field. GRIB files are read in a child process.
  const fs::path crashes =
      gridded_regression("fuzz_gridded_field-crash-7b08bd8080de0aec555a9fa6e62bb5a7b456c32b");
  NPE_EXPECT_THROW_WITH(read_gridded_field(crashes), DataError, "ecCodes failed on this file");
  REQUIRE_ERA5();
  EXPECT_GT(read_gridded_field(grib_file()).num_times(), 0);
}

TEST_F(Era5Files, Hdf5FaultsOnCorruptFilesAreContained) {
  // Corrupt NetCDF-4 files on which HDF5 1.10 faults, found by fuzz_gridded_field: closing one
  // after a failed read (H5C__flush_single_entry), it frees a pointer it never allocated;
  // reading others' dimension scales (H5HG_read under H5DSget_num_scales), it copies a global
  // heap object of length -1, or of 1.2 TB. NetCDF-4 files are read in a child process: the
  // program reports the file and goes on.
  for (const char* name :
       {"fuzz_gridded_field-bad-free-on-close-hdf5-3a7be7d5c0e69e8741dc9dc88e1b1b97844fca08",
        "fuzz_gridded_field-negative-size-memcpy-hdf5-9ad96e0afeb5f89396034557b8317a84dc001fb1",
        "fuzz_gridded_field-huge-memcpy-hdf5-bb34b3bd8b906a623530a0af1b6a12b77c314f74"}) {
    SCOPED_TRACE(name);
    // A signal in a plain build (SIGSEGV seen), AddressSanitizer's report under the sanitize
    // preset.
    NPE_EXPECT_THROW_WITH(read_gridded_field(gridded_regression(name)), DataError,
                          "libnetcdf/HDF5 failed on this file");
  }
  REQUIRE_ERA5();
  EXPECT_GT(read_gridded_field(netcdf_file()).num_times(), 0);
}

TEST_F(Era5Files, AGribHeaderNearTheEndOfTheFileIsChecked) {
  // An 11-byte file, "GRIB" and a GRIB 1 header claiming a 1-byte message: ecCodes allocated
  // that 1 byte and copied the header into it (found by fuzz_gridded_field in CI's minute).
  const fs::path cut_short = gridded_regression(
      "fuzz_gridded_field-crash-header-cut-short-eccodes-1a7728804be814b568b2fcb709a4566ec5383577");
  NPE_EXPECT_THROW_WITH(read_gridded_field(cut_short), DataError,
                        "the message at byte 0 claims 1 bytes, less than a GRIB header");
  // Cut before its length field, a header is refused as such.
  const auto path = scratch("cut.grib");
  std::ofstream(path, std::ios::binary) << std::string("GRIB\0\0", 6);
  NPE_EXPECT_THROW_WITH(read_gridded_field(path), DataError,
                        "the message at byte 0 ends inside its header");
}

TEST_F(Era5Files, AGridWhoseSizeOverflowsIsRefusedByName) {
  // A corrupt GRIB 2 message with Ni = 4278190320 and Nj = 4294967264: their product overflowed a
  // long in the reader (undefined behaviour that UBSan reported in the child; found by
  // fuzz_gridded_field). The sides are now bounded before they are multiplied.
  const fs::path overflows = gridded_regression(
      "fuzz_gridded_field-crash-grid-size-overflow-523b575ef0189ba9dcace344a8eb79511f965c32");
  NPE_EXPECT_THROW_WITH(read_gridded_field(overflows), DataError,
                        "implausible grid size (4278190320 x 4294967264 points)");
}

TEST_F(Era5Files, FieldsAboveTheValueLimitAreRefusedInEveryFormat) {
  REQUIRE_ERA5();
  GriddedReadOptions options;
  options.max_values = 1000;  // the files hold 744 hourly fields of 33 x 49
  NPE_EXPECT_THROW_WITH(read_gridded_field(netcdf_file(), options), DataError, "too large");
  NPE_EXPECT_THROW_WITH(read_gridded_field(grib_file(), options), DataError, "too large");
}

TEST_F(Era5Files, SplitKeepsTrainingCellsAndTimesOutOfTheTestSet) {
  REQUIRE_ERA5();
  Era5TaskSource source;
  const auto train = source.extent(Split::Train), test = source.extent(Split::Test);
  // South (training): rows of latitude < 54; north (test): > 54; 54.0 itself is a buffer.
  EXPECT_EQ(train.row_begin, 17);
  EXPECT_EQ(train.row_end, 33);
  EXPECT_EQ(test.row_begin, 0);
  EXPECT_EQ(test.row_end, 16);
  // Two-day blocks: train, test, train, validation, ... over the 31 days.
  const auto& blocks = source.day_blocks();
  ASSERT_EQ(blocks.size(), 16u);
  const Era5BlockUse cycle[] = {Era5BlockUse::Train, Era5BlockUse::Test, Era5BlockUse::Train,
                                Era5BlockUse::Validation};
  for (size_t k = 0; k < blocks.size(); ++k) {
    EXPECT_EQ(blocks[k].use, cycle[k % 4]) << k;
    EXPECT_EQ(blocks[k].time_begin, int64_t(k) * 48);
    EXPECT_EQ(blocks[k].time_end, std::min<int64_t>(744, int64_t(k + 1) * 48));
  }
  // Every window of a split lies inside one block of that split: no training hour in a test
  // window, none of a test window in training.
  const int64_t span = (source.config().time_steps - 1) * source.time_stride();
  for (auto split : {Split::Train, Split::Validation, Split::Test}) {
    const auto use = split == Split::Train        ? Era5BlockUse::Train
                     : split == Split::Validation ? Era5BlockUse::Validation
                                                  : Era5BlockUse::Test;
    ASSERT_FALSE(source.window_starts(split).empty());
    for (int64_t t : source.window_starts(split)) {
      const auto* first = source.block_at(t);
      ASSERT_NE(first, nullptr);
      EXPECT_EQ(first->use, use);
      EXPECT_EQ(source.block_at(t + span), first) << "window at " << t << " leaves its block";
    }
  }
  EXPECT_EQ(source.window_starts(Split::Test).size(), 4u * (48 - 24));
  // One test block alone, for results per block.
  Era5TaskSource one([] {
    Era5TaskConfig c;
    c.test_block = 2;
    return c;
  }());
  EXPECT_EQ(one.window_starts(Split::Test).front(), 9 * 48);
  EXPECT_EQ(one.window_starts(Split::Test).back(), 9 * 48 + 23);
  EXPECT_THROW(make_task_source("era5", {{"test_block", 4}}), ConfigError);
  const auto variants = source.evaluation_variants();
  ASSERT_EQ(variants.size(), 8u);  // 2 regions x 4 test blocks
  EXPECT_EQ(variants[0].group, "south");
  EXPECT_EQ(variants[7].group, "north");
  EXPECT_EQ(variants[5].overrides.at("test_block"), 1);
  EXPECT_NE(variants[1].label.find("2019-03-11 to 2019-03-12"), std::string::npos)
      << variants[1].label;
  // Latitude input: grid units north of 54 N; the training tasks lie south, test tasks north.
  auto south = source.sample(16, 3, {}, Split::Train).task;
  auto north = source.sample(16, 3, {}, Split::Test).task;
  EXPECT_LT(torch::cat({south.xc, south.xt}, 1).select(-1, 0).max().item<double>(), 0.0);
  EXPECT_GT(torch::cat({north.xc, north.xt}, 1).select(-1, 0).min().item<double>(), 0.0);
  EXPECT_EQ(south.num_context() + south.num_targets(), 15 * 15 * 5);
  // Context sizes U{N/100 .. N/3}.
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto nc = source.sample(1, seed).task.num_context();
    EXPECT_GE(nc, 12);
    EXPECT_LE(nc, 375);
  }
  // Standardised with the training region's statistics: mean about 0, sd about 1 there.
  const auto& c = source.config();
  EXPECT_GT(c.mean, 275.0);
  EXPECT_LT(c.mean, 285.0);
  auto y = source.sample(64, 5).task.yt;
  EXPECT_NEAR(y.mean().item<double>(), 0.0, 0.3);
  EXPECT_NEAR(y.std().item<double>(), 1.0, 0.3);
  // The statistics travel with the configuration (and so with checkpoints).
  auto rebuilt = task_source_from_json(source.to_json());
  EXPECT_DOUBLE_EQ(rebuilt->to_json().at("mean").get<double>(), c.mean);
  // Deterministic per seed.
  EXPECT_TRUE(torch::equal(source.sample(4, 9).task.yc, source.sample(4, 9).task.yc));
  auto kelvin = source.unstandardise(source.standardise(torch::tensor({280.0}, torch::kFloat64)));
  EXPECT_NEAR(kelvin.item<double>(), 280.0, 1e-9);
}

TEST_F(Era5Files, CheckpointsOfTheFirstProtocolKeepTheirTasks) {
  REQUIRE_ERA5();
  // A task configuration as checkpoints stored it before place features and day blocks.
  const auto old = nlohmann::json::parse(R"({"kind": "era5", "name": "era5", "data": "",
      "variable": "", "window": 15, "time_steps": 5, "step_hours": 6, "max_targets": 128,
      "min_context_fraction": 0.01, "max_context_fraction": 0.3333333333333333,
      "split_latitude": 54.0, "train_days": 20, "validation_days": 4, "test_region": "north",
      "mean": 281.3802277711784, "stddev": 2.1880994033481804, "origin_longitude": -4.0})");
  auto source = task_source_from_json(old);
  EXPECT_EQ(source->dim_x(), 3);
  const auto& era5 = dynamic_cast<const Era5TaskSource&>(*source);
  ASSERT_EQ(era5.day_blocks().size(), 3u);
  EXPECT_EQ(era5.day_blocks()[0].time_end, 20 * 24);
  EXPECT_EQ(era5.day_blocks()[1].time_end, 24 * 24);
  EXPECT_EQ(era5.window_starts(Split::Test).front(), 24 * 24);
  EXPECT_EQ(era5.window_starts(Split::Test).back(), 744 - 25);
  EXPECT_EQ(era5.evaluation_variants().size(), 2u);
  EXPECT_EQ(era5.out_of_range_translation().size(), 3u);
  // Written back, it stays the first protocol.
  EXPECT_EQ(task_source_from_json(source->to_json())->dim_x(), 3);
}

TEST_F(Era5Files, ElevationAndLandFractionAreInputsAlignedByCoordinates) {
  REQUIRE_ERA5();
  // The invariants file, read as a time-invariant field; refused as a field over time.
  GriddedReadOptions options;
  options.variable = "z";
  options.time_invariant = true;
  const auto z = read_gridded_field(default_era5_invariants_path(), options);
  EXPECT_EQ(z.values.sizes(), (std::vector<int64_t>{1, 153, 281}));
  EXPECT_TRUE(z.valid_times.empty());
  EXPECT_DOUBLE_EQ(z.latitudes.front(), 72.0);
  NPE_EXPECT_THROW_WITH(read_gridded_field(default_era5_invariants_path(), {"z"}), DataError,
                        "not on (time, latitude, longitude)");
  NPE_EXPECT_THROW_WITH(read_gridded_field(grib_file(), options), DataError, "NetCDF");

  Era5TaskSource source;
  ASSERT_EQ(source.dim_x(), 5);
  const auto& f = source.field();
  const auto& features = source.place_features();
  ASSERT_EQ(features.values.sizes(), (std::vector<int64_t>{33, 49, 2}));
  // Row and column of a coordinate of the data grid.
  auto row = [&](double lat) { return int64_t(std::lround((f.latitudes[0] - lat) / 0.25)); };
  auto col = [&](double lon) { return int64_t(std::lround((lon - f.longitudes[0]) / 0.25)); };
  // The same cells straight from the invariants file, found by their coordinates there.
  auto z_at = [&](double lat, double lon) {
    const auto r = int64_t(std::lround((72.0 - lat) / 0.25));
    const auto c = int64_t(std::lround((lon - z.longitudes[0]) / 0.25));
    return z.values[0][r][c].item<double>() / 9.80665 / 1000.0;
  };
  for (auto [lat, lon] : {std::pair{56.75, -5.0}, std::pair{50.0, -10.0}, std::pair{58.0, 2.0},
                          std::pair{53.0, -1.5}}) {
    EXPECT_NEAR(features.values[row(lat)][col(lon)][0].item<double>(), z_at(lat, lon), 1e-4)
        << lat << ", " << lon;
  }
  // The Scottish Highlands are high land, the Atlantic south-west of Ireland is sea level.
  EXPECT_GT(features.values[row(56.75)][col(-5.0)][0].item<double>(), 0.3);
  EXPECT_GT(features.values[row(56.75)][col(-5.0)][1].item<double>(), 0.9);
  EXPECT_NEAR(features.values[row(50.0)][col(-10.0)][0].item<double>(), 0.0, 0.02);
  EXPECT_LT(features.values[row(50.0)][col(-10.0)][1].item<double>(), 0.05);
  // Every point of a task carries its cell's features after the three coordinates, and a
  // translation moves the coordinates only.
  auto task = source.sample(2, 5, {}, Split::Train).task;
  auto moved = source.sample(2, 5, {3.0}, Split::Train).task;
  EXPECT_TRUE(torch::allclose(moved.xc.narrow(-1, 0, 3), task.xc.narrow(-1, 0, 3) + 3.0));
  EXPECT_TRUE(torch::equal(moved.xc.narrow(-1, 3, 2), task.xc.narrow(-1, 3, 2)));
  const auto xc = task.xc[0];
  for (int64_t i = 0; i < 5; ++i) {
    const auto r = int64_t(std::lround((f.latitudes[0] - 54.0) / 0.25 - xc[i][0].item<double>()));
    const auto c = int64_t(std::lround(xc[i][1].item<double>() + (-4.0 - f.longitudes[0]) / 0.25));
    EXPECT_NEAR(xc[i][3].item<double>(), features.values[r][c][0].item<double>(), 1e-6);
    EXPECT_NEAR(xc[i][4].item<double>(), features.values[r][c][1].item<double>(), 1e-6);
  }
  EXPECT_THROW(source.sample(1, 0, {1.0, 0.0, 0.0, 0.5, 0.0}), ConfigError);
  EXPECT_EQ(source.out_of_range_translation().size(), 5u);
  // The switch to train without them, and the errors.
  EXPECT_EQ(make_task_source("era5", {{"features", nlohmann::json::array()}})->dim_x(), 3);
  EXPECT_EQ(make_task_source("era5", {{"features", {"land_sea"}}})->dim_x(), 4);
  NPE_EXPECT_THROW_WITH(make_task_source("era5", {{"features", {"slope"}}}), ConfigError,
                        "unknown feature 'slope'");
  GriddedField outside = f;
  outside.latitudes = {20.0, 19.75};
  NPE_EXPECT_THROW_WITH(read_place_features(default_era5_invariants_path(), {"elevation"}, outside),
                        DataError, "no elevation at latitude 20");
  // Models take them: the coordinates' distances for TE attention, the features with the values.
  auto config = testing::tiny_config("tepttnp", 5, 1);
  config.dim_features = 2;
  auto model = make_model(config);
  torch::NoGradGuard no_grad;
  auto other = task;
  other.xt = task.xt.clone();
  other.xt.narrow(-1, 3, 1).add_(0.5);  // targets 500 m higher
  EXPECT_GT(testing::max_abs_diff(model->predict(task).mean, model->predict(other).mean), 1e-5);
}

// feature_noise jitters the place features of training tasks only: the same windows, points and
// values as without it, the coordinates untouched, the features off by noise of the stated
// spread; validation and test tasks keep the exact features.
TEST_F(Era5Files, FeatureNoiseJittersTheFeaturesOfTrainingTasksOnly) {
  REQUIRE_ERA5();
  Era5TaskConfig noisy_config;
  noisy_config.feature_noise = 0.1;
  const Era5TaskSource exact, noisy(noisy_config);
  const auto a = exact.sample(8, 11, {}, Split::Train), b = noisy.sample(8, 11, {}, Split::Train);
  EXPECT_TRUE(torch::equal(a.task.yc, b.task.yc));
  EXPECT_TRUE(torch::equal(a.task.xc.narrow(2, 0, 3), b.task.xc.narrow(2, 0, 3)));
  const auto jitter = (b.task.xc.narrow(2, 3, 2) - a.task.xc.narrow(2, 3, 2)).to(torch::kFloat64);
  EXPECT_NEAR(jitter.mean().item<double>(), 0.0, 0.02);
  EXPECT_NEAR(jitter.std().item<double>(), 0.1, 0.02);
  for (const auto split : {Split::Validation, Split::Test}) {
    const auto c = exact.sample(4, 3, {}, split), d = noisy.sample(4, 3, {}, split);
    EXPECT_TRUE(torch::equal(c.task.xc, d.task.xc) && torch::equal(c.task.xt, d.task.xt));
  }
  EXPECT_EQ(Era5TaskConfig::from_json(noisy_config.to_json()).feature_noise, 0.1);
  noisy_config.feature_noise = -1.0;
  NPE_EXPECT_THROW_WITH(noisy_config.validate(), ConfigError, "feature_noise");
}

TEST_F(Era5Files, GribAndTestRegionOptionsAndErrors) {
  REQUIRE_ERA5();
  auto grib = make_task_source("era5", {{"data", grib_file().string()}, {"test_region", "south"}});
  auto south_test = grib->sample(4, 1, {}, Split::Test).task;
  EXPECT_LT(south_test.xc.select(-1, 0).max().item<double>(), 0.0);
  EXPECT_EQ(grib->evaluation_variants().size(), 2u * 4u);
  EXPECT_THROW(make_task_source("era5", {{"test_region", "east"}}), ConfigError);
  EXPECT_THROW(make_task_source("era5", {{"window", 40}}), ConfigError);  // larger than a region
  EXPECT_THROW(make_task_source("era5", {{"data", "/nonexistent/era5.nc"}}), DataError);
}

// A regular latitude/longitude grid the way other sources lay it out, for "trained here,
// predicts there": the value of a cell is a known function of its place and time so that
// tasks can be checked against it.
struct GridLayout {
  double step = 0.5;
  bool ascending = true;     // latitude south to north
  bool sea_missing = false;  // NaN west of 6°W, as land-only data has
  size_t times = 1;
  enum class Unit { Celsius, Kelvin, Fahrenheit } unit = Unit::Celsius;
  std::string units = "degC";  // as the file states it
  std::string variable = "Tair", lat_name = "lat", lon_name = "lon";
  // The region (the British Isles unless said) and the hours between times.
  double south = 49.0, north = 59.0, west = -10.0, east = 2.0;
  double hours_apart = 6.0;

  float in_file_unit(float celsius) const {
    return unit == Unit::Celsius  ? celsius
           : unit == Unit::Kelvin ? celsius + 273.15f
                                  : celsius * 9.0f / 5.0f + 32.0f;
  }
};

float layout_value(double latitude, double longitude, size_t time) {
  return static_cast<float>(8.0 - 0.6 * (latitude - 54.0) + 0.2 * longitude + 0.5 * double(time));
}

void write_layout(const fs::path& path, const GridLayout& g) {
  std::vector<double> lats, lons, times;
  for (double la = g.south; la <= g.north + 1e-9; la += g.step) lats.push_back(la);
  for (double lo = g.west; lo <= g.east + 1e-9; lo += g.step) lons.push_back(lo);
  if (!g.ascending) std::reverse(lats.begin(), lats.end());
  for (size_t t = 0; t < g.times; ++t) times.push_back(g.hours_apart * double(t));
  std::vector<float> values;
  for (size_t t = 0; t < g.times; ++t)
    for (double la : lats)
      for (double lo : lons)
        values.push_back(g.sea_missing && lo < -6.0 ? NAN
                                                    : g.in_file_unit(layout_value(la, lo, t)));
  int id = 0, dims[3], lat_var, lon_var, time_var, var;
  check(nc_create(path.c_str(), NC_CLOBBER | NC_NETCDF4, &id));
  check(nc_def_dim(id, "time", times.size(), &dims[0]));
  check(nc_def_dim(id, g.lat_name.c_str(), lats.size(), &dims[1]));
  check(nc_def_dim(id, g.lon_name.c_str(), lons.size(), &dims[2]));
  check(nc_def_var(id, "time", NC_DOUBLE, 1, &dims[0], &time_var));
  check(nc_def_var(id, g.lat_name.c_str(), NC_DOUBLE, 1, &dims[1], &lat_var));
  check(nc_def_var(id, g.lon_name.c_str(), NC_DOUBLE, 1, &dims[2], &lon_var));
  check(nc_def_var(id, g.variable.c_str(), NC_FLOAT, 3, dims, &var));
  const std::string time_units = "hours since 2018-07-01 00:00", units = g.units;
  check(nc_put_att_text(id, time_var, "units", time_units.size(), time_units.c_str()));
  check(nc_put_att_text(id, lat_var, "units", 13, "degrees_north"));
  check(nc_put_att_text(id, lon_var, "units", 12, "degrees_east"));
  check(nc_put_att_text(id, var, "units", units.size(), units.c_str()));
  check(nc_enddef(id));
  check(nc_put_var_double(id, time_var, times.data()));
  check(nc_put_var_double(id, lat_var, lats.data()));
  check(nc_put_var_double(id, lon_var, lons.data()));
  check(nc_put_var_float(id, var, values.data()));
  check(nc_close(id));
}

TEST_F(Era5Files, AModelTrainedHerePredictsOnAnyRegularGrid) {
  REQUIRE_ERA5();
  // The shipped models' task: trained on the 0.25° British Isles file, statistics in kelvin.
  const auto shipped = find_shipped_models("era5");
  const auto tepttnp = std::find_if(shipped.begin(), shipped.end(), [](const ShippedModel& m) {
    return m.path.stem() == "tepttnp";
  });
  ASSERT_NE(tepttnp, shipped.end()) << "models/era5/tepttnp.pt";
  const auto predictor = load_predictor(tepttnp->path, torch::kCPU);
  auto trained = Era5TaskConfig::from_json(tepttnp->metadata.task);
  EXPECT_DOUBLE_EQ(trained.latitude_unit, 0.25);  // not recorded then: the shipped file's

  GridLayout half_degree_land_only_celsius;
  half_degree_land_only_celsius.sea_missing = true;
  GridLayout quarter_degree_kelvin_descending;
  quarter_degree_kelvin_descending.step = 0.25;
  quarter_degree_kelvin_descending.ascending = false;
  quarter_degree_kelvin_descending.unit = GridLayout::Unit::Kelvin;
  quarter_degree_kelvin_descending.units = "K";
  quarter_degree_kelvin_descending.times = 8;
  quarter_degree_kelvin_descending.variable = "t2m";
  quarter_degree_kelvin_descending.lat_name = "latitude";
  quarter_degree_kelvin_descending.lon_name = "longitude";
  // A file of a COADS-era tool: Fahrenheit spelled "DEG F" (UDUNITS reads "DEG_F"), coordinates
  // named neither lat/lon nor latitude/longitude, found by their units.
  GridLayout coads_fahrenheit;
  coads_fahrenheit.unit = GridLayout::Unit::Fahrenheit;
  coads_fahrenheit.units = "DEG F";
  coads_fahrenheit.variable = "AIRT";
  coads_fahrenheit.lat_name = "COADSY";
  coads_fahrenheit.lon_name = "COADSX";
  coads_fahrenheit.times = 2;
  int k = 0;
  for (const auto& layout :
       {half_degree_land_only_celsius, quarter_degree_kelvin_descending, coads_fahrenheit}) {
    SCOPED_TRACE("layout " + std::to_string(k));
    const auto path = scratch("layout" + std::to_string(k++) + ".nc");
    write_layout(path, layout);
    auto config = trained;
    config.data = path;
    config.whole_file = true;
    Era5TaskSource source(config);
    EXPECT_EQ(source.window_time_steps(), std::min<int64_t>(5, int64_t(layout.times)));
    EXPECT_DOUBLE_EQ(source.config().mean, trained.mean);  // the checkpoint's, not the file's
    // Inputs are in the training grid's units: 0.5° cells are two units apart.
    const auto x =
        source.inputs(torch::tensor({0, 1}), torch::tensor({0, 0}), torch::tensor({0, 0}));
    // Row 0 is the northernmost (59°N) whichever way the file runs.
    EXPECT_NEAR(x[0][0].item<double>(), (59.0 - 54.0) / 0.25, 1e-4);
    EXPECT_NEAR(x[0][0].item<double>() - x[1][0].item<double>(), layout.step / 0.25, 1e-4);
    EXPECT_NEAR(x[0][1].item<double>(), (-10.0 + 4.0) / 0.25, 1e-4);
    const auto batch = source.sample(4, 1, {}, Split::Test);
    const auto& task = batch.task;
    ASSERT_GT(task.xc.size(1), 0);
    ASSERT_GT(task.xt.size(1), 0);
    // Every context and target point is a cell with a value (never the missing sea), and its
    // value is the file's, in kelvin, standardised with the checkpoint's statistics.
    for (const auto& [xs, ys] : {std::pair{task.xc, task.yc}, std::pair{task.xt, task.yt}}) {
      ASSERT_TRUE(torch::isfinite(xs).all().item<bool>());
      ASSERT_TRUE(torch::isfinite(ys).all().item<bool>());
      const auto latitude = xs.select(-1, 0) * 0.25 + 54.0;
      const auto longitude = xs.select(-1, 1) * 0.25 - 4.0;
      if (layout.sea_missing) {
        EXPECT_GE(longitude.min().item<double>(), -6.0 - 1e-4);
      }
      const auto kelvin = ys.squeeze(-1).to(torch::kFloat64) * trained.stddev + trained.mean;
      const auto time = xs.select(-1, 2).to(torch::kFloat64);
      const auto expected = 8.0 - 0.6 * (latitude.to(torch::kFloat64) - 54.0) +
                            0.2 * longitude.to(torch::kFloat64) + 0.5 * time + 273.15;
      // Window-relative times: the window's first time adds a constant of at most 0.5 per step.
      const auto residual = kelvin - expected;
      EXPECT_LT((residual.amax(-1) - residual.amin(-1)).max().item<double>(), 2e-3);
    }
    // The model trained on the British Isles file predicts finite values there.
    const auto prediction = predictor->predict(batch);
    EXPECT_TRUE(torch::isfinite(prediction.mean).all().item<bool>());
    EXPECT_TRUE(torch::isfinite(prediction.stddev).all().item<bool>());
    ASSERT_EQ(source.evaluation_variants().size(), 1u);
  }
  // A training file (not whole_file) still needs two times.
  const auto one_time = scratch("one-time.nc");
  write_layout(one_time, half_degree_land_only_celsius);
  auto config = trained;
  config.data = one_time;
  EXPECT_THROW(Era5TaskSource{config}, DataError);
}

// The Maps tab's task, built in core from a plain scene: stations on cells without a value are
// neither context nor held out, every station's readings at the window's times are context, and
// the held-out cells are the window's other cells with a value, standardised like the context.
// The gridded task (issue 104): any regular temperature grid trains, here daily Sahel
// temperatures far from the shipped region: split at the grid's middle latitude (stored
// decided), no place features, the file's daily spacing asked for by name when step_hours does
// not fit it.
TEST_F(Era5Files, AnyGridTrainsAsTheGriddedTask) {
  GridLayout sahel;
  sahel.south = 5.0;
  sahel.north = 25.0;
  sahel.west = -5.0;
  sahel.east = 15.0;
  sahel.step = 0.5;
  sahel.times = 40;
  sahel.hours_apart = 24.0;
  const auto path = scratch("sahel-daily.nc");
  write_layout(path, sahel);
  NPE_EXPECT_THROW_WITH(make_task_source("gridded", {{"data", path.string()}}), ConfigError,
                        "step_hours=24");
  const auto source =
      make_task_source("gridded", {{"data", path.string()}, {"step_hours", 24}, {"block_days", 8}});
  EXPECT_EQ(source->name(), "gridded");
  EXPECT_EQ(source->dim_x(), 3);  // no place features: coordinates and time only
  const auto json = source->to_json();
  EXPECT_DOUBLE_EQ(json["split_latitude"].get<double>(), 15.0);  // the middle row of 41
  const auto& era5 = dynamic_cast<const Era5TaskSource&>(*source);
  EXPECT_GT(era5.extent(Split::Train).row_begin, 0);  // the south trains
  EXPECT_EQ(era5.extent(Split::Test).row_begin, 0);   // the north tests
  // The statistics are the training part's, in kelvin: rows 5°N to 14.5°N (mean 9.75°N), every
  // column (mean 5°E), training blocks days 0-7, 16-23, 32-39 (mean day 19.5): layout_value.
  EXPECT_NEAR(json["mean"].get<double>(),
              273.15 + 8.0 - 0.6 * (9.75 - 54.0) + 0.2 * 5.0 + 0.5 * 19.5, 0.05);
  const auto batch = source->sample(2, 1);
  EXPECT_EQ(batch.task.dim_x(), 3);
  EXPECT_TRUE(torch::isfinite(batch.task.yt).all().item<bool>());
  // Rebuilt from what a checkpoint stores: the same tasks.
  EXPECT_TRUE(torch::equal(task_source_from_json(json)->sample(2, 1).task.yt, batch.task.yt));
  // What the Training tab's preview and npe train say about it.
  const auto text = source->describe();
  for (const auto* part :
       {"'sahel-daily.nc'", "40 times", "41 × 41 cells of 0.5° × 0.5°", "5° N to 25° N",
        "5° W to 15° E", "south of 15° N", "the rows north of it", "at 5 times 24 h apart"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " not in: " << text;
  }
}

TEST_F(Era5Files, TheMapTabsSceneBecomesATaskWithItsHeldOutCells) {
  GridLayout land_only;
  land_only.sea_missing = true;  // NaN west of 6°W: columns 0..7 of the 0.5° grid
  land_only.times = 3;
  const auto path = scratch("scene.nc");
  write_layout(path, land_only);
  Era5TaskConfig config;
  config.data = path;
  config.whole_file = true;
  config.features = {};
  const Era5TaskSource source(config);
  const int64_t steps = source.window_time_steps();
  ASSERT_GE(steps, 2);
  Era5Scene scene;
  scene.hour = source.field().num_times() - 1;
  scene.top = 2;
  scene.left = 4;  // columns 4..13: the first four are sea (missing)
  scene.width = 10;
  scene.stations = {{0, 0}, {1, 5}, {3, 8}};  // the first on a missing cell
  const auto built = scene_task(source, scene);
  const auto& task = built.task;
  ASSERT_EQ(task.xc.size(0), 1);
  EXPECT_EQ(task.xc.size(1), 2 * steps);
  EXPECT_EQ(task.xt.size(1), 100);
  EXPECT_FALSE(task.yt.defined());
  EXPECT_EQ(task.xc.size(2), source.dim_x());
  // Context values are the stations' readings, standardised.
  const auto& values = source.field().values;
  const int64_t stride = source.time_stride();
  for (int64_t k = 0; k < steps; ++k) {
    const auto reading = values[scene.hour - (steps - 1 - k) * stride][2 + 1][4 + 5];
    EXPECT_NEAR(task.yc[0][k][0].item<double>(),
                source.standardise(reading.to(torch::kFloat64).view({1})).item<double>(), 1e-5);
  }
  // Held out: 10 rows x 6 land columns, less the two stations on land.
  ASSERT_EQ(built.held_out_index.size(0), 58);
  ASSERT_EQ(built.held_out_y.sizes(), (std::vector<int64_t>{58, 1}));
  for (int64_t j = 0; j < 58; ++j) {
    const int64_t i = built.held_out_index[j].item<int64_t>();
    const int64_t row = i / 10, col = i % 10;
    EXPECT_GE(col, 4);
    EXPECT_FALSE((row == 1 && col == 5) || (row == 3 && col == 8));
    const auto truth = values[scene.hour][2 + row][4 + col].to(torch::kFloat64).view({1});
    EXPECT_NEAR(built.held_out_y[j][0].item<double>(), source.standardise(truth).item<double>(),
                1e-5);
  }
  // The targets' inputs are the cells', at the hour's step.
  EXPECT_TRUE(torch::allclose(task.xt[0][0], source.inputs(torch::tensor({2}), torch::tensor({4}),
                                                           torch::tensor({steps - 1}))[0]));
  auto outside = scene;
  outside.stations = {{10, 0}};
  EXPECT_THROW(scene_task(source, outside), DataError);
  outside = scene;
  outside.left = source.field().num_longitudes() - 5;
  EXPECT_THROW(scene_task(source, outside), DataError);
  outside = scene;
  outside.hour = 0;
  EXPECT_THROW(scene_task(source, outside), DataError);

  // Measurement noise (the Maps tab's episodes) is added to the station's readings, in the
  // field's unit, per time; the held-out cells keep the truth.
  auto noisy = scene;
  noisy.noise = {std::vector<double>(size_t(steps), 0.0), {}};
  for (int64_t k = 0; k < steps; ++k) noisy.noise[1].push_back(0.25 * double(k + 1));
  const auto with_noise = scene_task(source, noisy);
  for (int64_t k = 0; k < steps; ++k) {
    const auto reading = values[scene.hour - (steps - 1 - k) * stride][2 + 1][4 + 5];
    const auto noisy_reading = reading.to(torch::kFloat64).view({1}) + 0.25 * double(k + 1);
    EXPECT_NEAR(with_noise.task.yc[0][k][0].item<double>(),
                source.standardise(noisy_reading).item<double>(), 1e-5);
    EXPECT_NEAR(with_noise.task.yc[0][steps + k][0].item<double>(),
                task.yc[0][steps + k][0].item<double>(), 1e-6);  // the third: no noise given
  }
  EXPECT_TRUE(torch::equal(with_noise.held_out_y, built.held_out_y));
  auto wrong = noisy;
  wrong.noise[1].pop_back();
  EXPECT_THROW(scene_task(source, wrong), DataError);
  wrong = noisy;
  wrong.noise[1][0] = std::nan("");
  EXPECT_THROW(scene_task(source, wrong), DataError);
}

// Stations by latitude and longitude (npe place --grid): each at its nearest cell, the window
// of the model's size centred on the stations' middle or a given centre and moved inside the
// field at its edges; stations outside it, or on a cell already taken, are counted, not placed.
TEST_F(Era5Files, StationsByLatitudeAndLongitudeArePlacedInAWindowInsideTheField) {
  GridLayout layout;
  layout.times = 3;
  const auto path = scratch("stations.nc");
  write_layout(path, layout);
  Era5TaskConfig config;
  config.data = path;
  config.whole_file = true;
  config.features = {};
  config.window = 5;
  const Era5TaskSource source(config);
  const auto& f = source.field();
  const int64_t rows = f.num_latitudes(), cols = f.num_longitudes();
  ASSERT_GE(rows, 8);
  ASSERT_GE(cols, 8);
  auto at = [&](int64_t r, int64_t c) {
    return LatLon{f.latitudes[size_t(r)], f.longitudes[size_t(c)]};
  };
  // Middle of rows 3..5 and columns 2..6 is (4, 4): the window starts at (2, 2).
  auto placed = scene_for_stations(source, 2, {at(3, 2), at(5, 6), at(3, 2)});
  EXPECT_EQ(placed.scene.hour, 2);
  EXPECT_EQ(placed.scene.width, 5);
  EXPECT_EQ(placed.scene.top, 2);
  EXPECT_EQ(placed.scene.left, 2);
  EXPECT_EQ(placed.scene.stations, (std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {3, 4}}));
  EXPECT_EQ(placed.left_out, 1);  // the repeated station
  // A centre in the field's corner: the window is moved inside it; a far station is left out.
  placed = scene_for_stations(source, 2, {at(0, 0), at(rows - 1, cols - 1)}, at(0, 0));
  EXPECT_EQ(placed.scene.top, 0);
  EXPECT_EQ(placed.scene.left, 0);
  EXPECT_EQ(placed.scene.stations, (std::vector<std::pair<int64_t, int64_t>>{{0, 0}}));
  EXPECT_EQ(placed.left_out, 1);
  placed = scene_for_stations(source, 2, {}, at(rows - 1, cols - 1));
  EXPECT_EQ(placed.scene.top, rows - 5);
  EXPECT_EQ(placed.scene.left, cols - 5);
  EXPECT_NO_THROW(scene_task(source, placed.scene));
  // A field smaller than the window is a clear error (from the source or the placement).
  auto wide = config;
  wide.window = std::max(rows, cols) + 1;
  EXPECT_THROW(scene_for_stations(Era5TaskSource(wide), 2, {}), Error);
}

TEST_F(Era5Files, TranslationEquivariantModelsAreEquivariantOnEra5Tasks) {
  REQUIRE_ERA5();
  Era5TaskSource source;
  auto task = source.sample(2, 4, {}, Split::Test).task;
  task.xc = task.xc.slice(1, 0, 60);
  task.yc = task.yc.slice(1, 0, 60);
  task.xt = task.xt.slice(1, 0, 80);
  task.yt = task.yt.slice(1, 0, 80);
  // Whole cells and steps (exact for the ConvCNP); the place features stay with the cells.
  const Translation shift = {-17.0, 9.0, 3.0, 0.0, 0.0};
  for (const char* kind : {"tetnp", "tepttnp", "convcnp2d", "bsatnp", "tetnpnd"}) {
    auto config = testing::tiny_config(kind, 5, 1);
    config.dim_features = 2;
    if (std::string(kind) == "bsatnp") {  // the ERA5 design: space and time biases, shared blocks
      config.options<AttentionBiasOptions>().time_bias_features = 3;
      config.options<LayerSharingOptions>().share_layer_weights = true;
    }
    auto model = make_model(config);
    model->eval();
    torch::NoGradGuard no_grad;
    auto a = model->predict(task), b = model->predict(task.translated(shift));
    EXPECT_LT(testing::max_abs_diff(a.mean, b.mean), 1e-4) << kind;
    EXPECT_LT(testing::max_abs_diff(a.stddev, b.stddev), 1e-4) << kind;
  }
  // A model that sees x directly is not.
  auto plain = testing::tiny_config("pttnp", 5, 1);
  plain.dim_features = 2;
  auto model = make_model(plain);
  torch::NoGradGuard no_grad;
  EXPECT_GT(
      testing::max_abs_diff(model->predict(task).mean, model->predict(task.translated(shift)).mean),
      1e-3);
}

TEST_F(Era5Files, SeArdGpFitImprovesTheMarginalLikelihoodFit) {
  REQUIRE_ERA5();
  Era5TaskSource source;
  auto batch = source.sample(2, 11, {}, Split::Test);
  batch.task.xc = batch.task.xc.slice(1, 0, 100);
  batch.task.yc = batch.task.yc.slice(1, 0, 100);
  PredictorOptions fitted;
  fitted.fitted.iterations = 150;
  PredictorOptions prior = fitted;
  prior.fitted.iterations = 0;
  auto ll = [&](const PredictorOptions& options) {
    auto gp = make_predictor("gp-se-ard", options);
    auto prediction = gp->predict(batch);
    EXPECT_TRUE(torch::isfinite(prediction.mean).all().item<bool>());
    return log_likelihood_per_task(prediction, batch.task.yt).mean().item<double>();
  };
  const double before = ll(prior), after = ll(fitted);
  testing::report_learning("held-out LL, prior and fitted", before, after);
  // Temperature is smooth over a few cells: the fitted lengthscales predict far better than
  // the unit lengthscales it starts from. Measured: -0.827 -> 0.288 (a gain of 1.115) under
  // every BLAS kernel and thread count of tests/measure-learning-spread.sh, to four digits.
  EXPECT_GT(after, before + 0.2) << "prior " << before << ", fitted " << after;
}

// A whole grid predicted at once (npe predict --grid): tiles that together hold every cell with
// a value exactly once, the context a seeded fraction of those cells or stations at their
// nearest cells, everything standardised with the model's statistics in the grid's units.
TEST_F(Era5Files, AWholeGridBecomesTilesHoldingEveryCellWithAValueOnce) {
  GridLayout land_only;
  land_only.sea_missing = true;  // NaN west of 6°W
  const auto path = scratch("whole.nc");
  write_layout(path, land_only);
  const auto field = read_gridded_field(path, {});
  const int64_t rows = field.num_latitudes(), cols = field.num_longitudes();
  Era5TaskConfig model;
  model.features = {};
  model.mean = 280.0;  // kelvin, as trained; the grid is in °C
  model.stddev = 4.0;
  model.latitude_unit = 0.25;
  model.longitude_unit = 0.25;
  model.split_latitude = 54.0;
  model.origin_longitude = -10.0;
  GridContext context;
  context.fraction = 0.1;
  context.seed = 3;
  const auto grid = grid_prediction(model, field, 0, context, 6);
  EXPECT_NEAR(grid.task.mean, 280.0 - 273.15, 1e-9);

  const auto truth = grid.truth.contiguous();
  int64_t with_value = 0;
  for (int64_t i = 0; i < rows * cols; ++i)
    with_value += std::isfinite(truth.view({-1})[i].item<double>());
  std::vector<int> seen(size_t(rows * cols), 0);
  int64_t context_points = 0;
  for (const auto& tile : grid.tiles) {
    const int64_t r0 = tile.cells.front() / cols / 6 * 6, c0 = tile.cells.front() % cols / 6 * 6;
    ASSERT_EQ(tile.task.xt.size(1), int64_t(tile.cells.size()));
    for (size_t k = 0; k < tile.cells.size(); ++k) {
      const int64_t cell = tile.cells[k], r = cell / cols, c = cell % cols;
      ++seen[size_t(cell)];
      EXPECT_TRUE(r >= r0 && r < r0 + 6 && c >= c0 && c < c0 + 6) << cell;
      const auto [north, east] =
          grid.task.coordinates(field.latitudes[size_t(r)], field.longitudes[size_t(c)]);
      EXPECT_NEAR(tile.task.xt[0][int64_t(k)][0].item<double>(), north, 1e-4);
      EXPECT_NEAR(tile.task.xt[0][int64_t(k)][1].item<double>(), east, 1e-4);
      EXPECT_EQ(tile.task.xt[0][int64_t(k)][2].item<double>(), 0.0);  // the hour itself
    }
    // The tile's context is the flagged cells inside it, standardised.
    int64_t flagged = 0;
    for (int64_t r = r0; r < std::min(rows, r0 + 6); ++r)
      for (int64_t c = c0; c < std::min(cols, c0 + 6); ++c)
        flagged += grid.context_flag[r][c].item<double>() == 1.0;
    ASSERT_EQ(tile.task.xc.size(1), flagged);
    for (int64_t j = 0; j < flagged; ++j) {
      const double y = tile.task.yc[0][j][0].item<double>();
      EXPECT_TRUE(std::isfinite(y));
    }
    context_points += flagged;
  }
  for (int64_t i = 0; i < rows * cols; ++i) {
    EXPECT_EQ(seen[size_t(i)], std::isfinite(truth.view({-1})[i].item<double>()) ? 1 : 0) << i;
  }
  EXPECT_EQ(grid.num_context, std::llround(0.1 * double(with_value)));
  EXPECT_EQ(context_points, grid.num_context);
  // The same seed gives the same context; the prediction comes back in the grid's units.
  EXPECT_TRUE(
      torch::equal(grid_prediction(model, field, 0, context, 6).context_flag, grid.context_flag));
  Prediction standard{torch::zeros({1, 2, 1}), torch::ones({1, 2, 1})};
  const auto [mean, stddev] = grid.in_grid_units(standard);
  EXPECT_NEAR(mean[0].item<double>(), 280.0 - 273.15, 1e-9);
  EXPECT_NEAR(stddev[1].item<double>(), 4.0, 1e-9);

  // Stations: each at its nearest cell (one whole grid, no tiles), a reading that is not a
  // number skipped; none given as cells of the grid.
  context.stations =
      std::vector<StationReading>{{54.1, -1.9, 10.0}, {50.0, 0.0, NAN}, {58.0, -3.0, 7.0}};
  const auto stations = grid_prediction(model, field, 0, context, 0);
  ASSERT_EQ(stations.tiles.size(), 1u);
  EXPECT_EQ(stations.num_context, 2);
  EXPECT_EQ(stations.context_flag.sum().item<double>(), 0.0);
  EXPECT_NEAR(stations.tiles[0].task.yc[0][0][0].item<double>(), (10.0 - (280.0 - 273.15)) / 4.0,
              1e-5);
  EXPECT_EQ(int64_t(stations.tiles[0].cells.size()), with_value);

  // No context (stations given but none usable, an empty station list, a fraction that selects
  // no cell) leaves nothing to predict; a fraction that is not one is an error.
  context.stations = std::vector<StationReading>{{50.0, 0.0, NAN}};
  auto none = grid_prediction(model, field, 0, context, 0);
  EXPECT_EQ(none.num_context, 0);
  EXPECT_TRUE(none.tiles.empty());
  context.stations = std::vector<StationReading>{};  // not the random context
  none = grid_prediction(model, field, 0, context, 0);
  EXPECT_EQ(none.num_context, 0);
  EXPECT_EQ(none.context_flag.sum().item<double>(), 0.0);
  context.stations.reset();
  context.fraction = 0.0;
  EXPECT_EQ(grid_prediction(model, field, 0, context, 0).num_context, 0);
  context.fraction = 1.5;
  EXPECT_THROW(grid_prediction(model, field, 0, context, 0), ConfigError);
}

}  // namespace
}  // namespace npe
