#pragma once
// ERA5 temperature tasks, scaled from the paper's protocol (Appendix F.4) to the British Isles
// grid of ../shared/data/era5: train on the southern half in the first part of the month,
// evaluate on the same region and on the unseen northern half in the last part.

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "npe/data/gridded_field.h"
#include "npe/data/task_source.h"

namespace npe {

/// $NPE_ERA5_DATA, else the NetCDF file of the shared data folder next to the source tree.
std::filesystem::path default_era5_path();

/// Which rows of the grid a split draws from.
enum class Era5Region { South, North };
std::string to_string(Era5Region region);

/// Configuration of ERA5 tasks. A task is a window of `window` x `window` grid cells over
/// `time_steps` times `step_hours` apart (15 x 15 x 5 = 1125 points by default). Inputs (D_x = 3)
/// are in grid units: (latitude - origin_latitude) / spacing (north positive), (longitude -
/// origin_longitude) / spacing (east positive) and the hours since the window's first time
/// divided by step_hours. Surface elevation, which the paper adds as a fourth input, is not in
/// this data. Output: the variable standardised with the training region's mean and standard
/// deviation (stored here, so checkpoints carry them). N_c ~ U{ceil(N/100) .. floor(N/3)} per
/// batch; the other points are targets (at most max_targets, 0 = all).
///
/// Split: rows south of split_latitude form the training region, rows north of it the test
/// region (the row on it belongs to neither). Times: days 1..train_days of the file train,
/// the next validation_days validate, the rest test. Train and validation tasks come from the
/// south; test tasks from `test_region`.
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
  double split_latitude = 54.0;
  int64_t train_days = 20;
  int64_t validation_days = 4;
  Era5Region test_region = Era5Region::North;
  /// Standardisation and coordinate origin; NaN: computed from the data (training region and
  /// period for the statistics, the grid's central longitude for the origin).
  double mean = std::nan("");
  double stddev = std::nan("");
  double origin_longitude = std::nan("");

  nlohmann::json to_json() const;
  static Era5TaskConfig from_json(const nlohmann::json& json);
  void validate() const;
};

/// Row, column and time ranges (half-open index ranges into the field) of a split.
struct Era5Extent {
  int64_t row_begin = 0, row_end = 0;
  int64_t col_begin = 0, col_end = 0;
  int64_t time_begin = 0, time_end = 0;
};

class Era5TaskSource final : public TaskSource {
 public:
  /// Reads the data (once per file and process). Throws DataError when it cannot be read,
  /// ConfigError when the grid is too small for the split.
  explicit Era5TaskSource(Era5TaskConfig config = {});

  std::string name() const override { return m_config.name; }
  int64_t dim_x() const override { return 3; }
  int64_t dim_y() const override { return 1; }
  TaskBatch sample(int64_t batch_size, uint64_t seed, const Translation& tau = {},
                   Split split = Split::Train) const override;
  nlohmann::json to_json() const override { return m_config.to_json(); }
  void adapt_model_config(ModelConfig& config, const std::string& size) const override;
  /// From the training region to the test region: the distance between their first rows.
  Translation out_of_range_translation() const override;
  /// Test tasks from the training region (south) and from the unseen region (north).
  std::vector<Variant> evaluation_variants() const override;

  const Era5TaskConfig& config() const { return m_config; }
  const GriddedField& field() const { return *m_field; }
  /// Where tasks of a split come from; region_of(split) names its rows.
  Era5Extent extent(Split split) const;
  Era5Extent region_extent(Era5Region region) const;
  Era5Region region_of(Split split) const;
  /// Index steps between two times of a task (step_hours in units of the file's spacing).
  int64_t time_stride() const { return m_time_stride; }

  /// Model inputs [N, 3] of grid cells (rows, cols: [N] long) at time offsets within a window
  /// (steps: [N] long, 0 = the window's first time).
  torch::Tensor inputs(const torch::Tensor& rows, const torch::Tensor& cols,
                       const torch::Tensor& steps) const;
  /// Field values (in the file's units) to model outputs and back.
  torch::Tensor standardise(const torch::Tensor& values) const;
  torch::Tensor unstandardise(const torch::Tensor& outputs) const;
  double output_scale() const { return m_config.stddev; }

 private:
  Era5TaskConfig m_config;
  std::shared_ptr<const GriddedField> m_field;
  int64_t m_time_stride = 1;
};

}  // namespace npe
