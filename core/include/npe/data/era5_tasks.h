#pragma once
// ERA5 temperature tasks, scaled from the paper's protocol (Appendix F.4) to the British Isles
// grid shipped in data/era5: train on the southern half in the first part of the month,
// evaluate on the same region and on the unseen northern half in the last part.

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "npe/data/gridded_field.h"
#include "npe/data/place_features.h"
#include "npe/data/task_source.h"
#include "npe/data/temperature_unit.h"

namespace npe {

/// $NPE_ERA5_DATA, else the shipped March 2019 NetCDF file (data/era5, npe/shipped_files.h).
std::filesystem::path default_era5_path();

/// The temperature unit of `field` (npe/data/temperature_unit.h); throws DataError naming the
/// file, the variable and its unit when it is not a temperature. Models are trained on kelvin;
/// Era5TaskSource converts files in other units as it reads them.
TemperatureUnit file_temperature_unit(const GriddedField& field);

/// Which rows of the grid a split draws from.
enum class Era5Region { South, North };
std::string to_string(Era5Region region);

/// What a block of days is used for (Era5TaskConfig::block_pattern).
enum class Era5BlockUse { Train, Validation, Test };

/// A run of days of the file and what it is used for: times [time_begin, time_end) (indices).
struct Era5DayBlock {
  int64_t time_begin = 0, time_end = 0;
  Era5BlockUse use = Era5BlockUse::Train;
};

/// Configuration of ERA5 tasks. A task is a window of `window` x `window` grid cells over
/// `time_steps` times `step_hours` apart (15 x 15 x 5 = 1125 points by default). Inputs are
/// three coordinates in grid units: (latitude - origin_latitude) / spacing (north positive),
/// (longitude - origin_longitude) / spacing (east positive) and the hours since the window's
/// first time divided by step_hours; then the place features of the cell (`features`, read from
/// the invariants file: elevation in km and land fraction, as the paper adds elevation), so
/// D_x = 3 + features. Translations move the coordinates only: a place keeps its terrain.
/// Output: the variable standardised with the training region's mean and standard deviation
/// (stored here, so checkpoints carry them). N_c ~ U{ceil(N/100) .. floor(N/3)} per batch; the
/// other points are targets (at most max_targets, 0 = all).
///
/// Split: rows south of split_latitude form the training region, rows north of it the test
/// region (the row on it belongs to neither). Times: the file's days are cut into blocks of
/// block_days days that take the uses of block_pattern in turn (by default train, test,
/// train, validation), so every split sees the month's changing weather; a task window lies
/// inside one block. Train and validation tasks come from the south; test tasks from
/// `test_region` (and from test block `test_block` alone when it is >= 0). block_days = 0 is
/// the first protocol: days 1..train_days train, the next validation_days validate, the rest
/// test (checkpoints that predate blocks were trained so).
struct Era5TaskConfig {
  std::string name = "era5";
  std::filesystem::path data;  ///< NetCDF or GRIB; empty: default_era5_path()
  std::string variable;        ///< empty: the file's only gridded variable
  int64_t window = 15;
  int64_t time_steps = 5;
  int64_t step_hours = 6;
  double min_context_fraction = 0.01;
  double max_context_fraction = 1.0 / 3.0;
  int64_t max_targets = 0;
  /// NaN: the grid's middle row (decided when the file is read, stored decided).
  double split_latitude = 54.0;
  int64_t block_days = 2;
  std::vector<Era5BlockUse> block_pattern = {Era5BlockUse::Train, Era5BlockUse::Test,
                                             Era5BlockUse::Train, Era5BlockUse::Validation};
  int64_t test_block = -1;
  int64_t train_days = 20;      ///< block_days = 0 only
  int64_t validation_days = 4;  ///< block_days = 0 only
  Era5Region test_region = Era5Region::North;
  /// Place features of every point (known_place_features()); empty: coordinates only.
  std::vector<std::string> features = {"elevation", "land_sea"};
  std::filesystem::path invariants;  ///< empty: default_era5_invariants_path()
  /// Standard deviation of Gaussian noise added to every place feature of training tasks (in
  /// the features' units: km of elevation, land fraction), drawn afresh per point and task. A
  /// regulariser: exact features let a model tell the training region's places apart and learn
  /// what each did on the training days; noisy ones keep their physical effect (a lapse rate)
  /// learnable. Validation and test tasks always see the exact features. 0: none.
  double feature_noise = 0.0;
  /// Standardisation and coordinate origin; NaN: computed from the data (training region and
  /// period for the statistics, the grid's central longitude for the origin).
  double mean = std::nan("");
  double stddev = std::nan("");
  double origin_longitude = std::nan("");
  /// Degrees per unit of the latitude and longitude inputs: the training grid's spacing, so a
  /// model works in physical distances and predicts on grids of any resolution. NaN: the
  /// spacing of the grid read (checkpoints from before these fields: 0.25, the shipped file's).
  double latitude_unit = std::nan("");
  double longitude_unit = std::nan("");
  /// Any regular latitude/longitude temperature grid as a whole, not a training file: every
  /// window is a test window (no day blocks, no regions), windows have as many times as the
  /// file (up to time_steps), and cells without a value or without place features are never
  /// context or targets. Evaluation and the Maps tab use this for files other than the one a
  /// model was trained on; the statistics and units then come from the checkpoint.
  bool whole_file = false;

  /// Model coordinates (north, east) of a place, in latitude_unit / longitude_unit.
  std::pair<double, double> coordinates(double latitude, double longitude) const;
  /// Whether `file` is this configuration's data file (empty data: default_era5_path()).
  bool reads(const std::filesystem::path& file) const;
  /// This configuration (a model's statistics, inputs and window) reading `file`: as its
  /// training data where it is that file, else whole (whole_file). Empty variable: the file's
  /// only gridded one.
  Era5TaskConfig reading(const std::filesystem::path& file, const std::string& variable) const;

  nlohmann::json to_json() const;
  /// Fields missing from `json` take the values of the first protocol where they changed it
  /// (no features, block_days = 0), so older checkpoints keep their tasks.
  static Era5TaskConfig from_json(const nlohmann::json& json);
  void validate() const;
};

std::string to_string(Era5BlockUse use);

/// Row and column ranges (half-open index ranges into the field) of a region.
struct Era5Extent {
  int64_t row_begin = 0, row_end = 0;
  int64_t col_begin = 0, col_end = 0;
};

class Era5TaskSource final : public TaskSource {
 public:
  /// Reads the data (once per file and process). Throws DataError when it cannot be read,
  /// ConfigError when the grid is too small for the split.
  explicit Era5TaskSource(Era5TaskConfig config = {});

  std::string name() const override { return m_config.name; }
  int64_t dim_x() const override { return 3 + place_features().count(); }
  int64_t dim_y() const override { return 1; }
  TaskBatch sample(int64_t batch_size, uint64_t seed, const Translation& tau = {},
                   Split split = Split::Train) const override;
  nlohmann::json to_json() const override { return m_config.to_json(); }
  /// From the training region to the test region: the distance between their first rows (the
  /// place features' components are zero).
  Translation out_of_range_translation() const override;
  /// Test tasks of each test block from the training region (south) and from the unseen
  /// region (north), grouped by region.
  std::vector<Variant> evaluation_variants() const override;

  const Era5TaskConfig& config() const { return m_config; }
  const GriddedField& field() const { return *m_field; }
  /// One paragraph for the user: the file, its variable, times and grid, the regions and
  /// windows of each split, the task's size and the standardisation.
  std::string describe() const override;
  /// Rows and columns tasks of a split come from; region_of(split) names them.
  Era5Extent extent(Split split) const;
  Era5Extent region_extent(Era5Region region) const;
  Era5Region region_of(Split split) const;
  /// The file's days in blocks, in time order (one block per split for block_days = 0).
  const std::vector<Era5DayBlock>& day_blocks() const { return m_blocks; }
  /// The block holding a time index (of the field), or nullptr.
  const Era5DayBlock* block_at(int64_t time) const;
  /// First time indices of the task windows of a split: every window lies in one block.
  const std::vector<int64_t>& window_starts(Split split) const;
  const PlaceFeatures& place_features() const { return *m_features; }
  /// Index steps between two times of a task (step_hours in units of the file's spacing).
  int64_t time_stride() const { return m_time_stride; }
  /// Times per task window: time_steps, or fewer in whole_file mode when the file is shorter.
  int64_t window_time_steps() const { return m_window_time_steps; }
  /// [lat, lon] bool: cells that can be context or targets (a value at some time and, for
  /// models with place features, known features). All true for a training file.
  const torch::Tensor& usable_cells() const { return m_usable; }

  /// Model inputs [N, 3] of grid cells (rows, cols: [N] long) at time offsets within a window
  /// (steps: [N] long, 0 = the window's first time).
  torch::Tensor inputs(const torch::Tensor& rows, const torch::Tensor& cols,
                       const torch::Tensor& steps) const;
  /// Field values (in the file's units) to model outputs and back.
  torch::Tensor standardise(const torch::Tensor& values) const;
  torch::Tensor unstandardise(const torch::Tensor& outputs) const;
  double output_scale() const { return m_config.stddev; }

 private:
  TaskBatch sample_whole_file(int64_t batch_size, std::mt19937_64& engine, const Era5Extent& e,
                              const torch::Tensor& shift) const;

  Era5TaskConfig m_config;
  std::shared_ptr<const GriddedField> m_field;
  std::shared_ptr<const PlaceFeatures> m_features;
  int64_t m_time_stride = 1;
  int64_t m_window_time_steps = 1;
  torch::Tensor m_usable;
  std::vector<Era5DayBlock> m_blocks;
  std::vector<int64_t> m_starts[3];  // by Split
};

}  // namespace npe
