#pragma once
// Tasks from the user's own series (series_file.h): a task is a window of the series, its rows
// split at random into context and targets as gp1d's tasks are. Inputs and outputs are
// standardised (the window onto [-2, 2], the gp1d models' context range; each y by the training
// part's mean and standard deviation), and the standardisation is part of the configuration, so
// a checkpoint carries it and every prediction maps back to the data's units.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "npe/data/series_file.h"
#include "npe/data/task_source.h"

namespace npe {

/// How a series file is divided into training, validation and test data.
enum class SeriesSplit {
  /// Each series' rows in x order: the first train_fraction train, the next
  /// validation_fraction validate, the rest test (forecasting what comes next).
  Tail,
  /// Whole series: the first train_fraction of the series (in file order) train, the next
  /// validation_fraction validate, the rest test (generalising to unseen series).
  Series,
};
std::string to_string(SeriesSplit split);

struct SeriesTaskConfig {
  std::string name = "series";
  std::filesystem::path data;  ///< required
  SeriesColumns columns;
  /// Length of a task's window in x units (hours for date-times); 0: 128 times the spacing.
  double window = 0.0;
  /// Points per task (context plus targets); 0: about what a window holds, at most 256.
  int64_t num_points = 0;
  int64_t min_num_context = 1;
  /// 0: half of num_points. Targets are the other num_points - max_num_context points.
  int64_t max_num_context = 0;
  SeriesSplit split = SeriesSplit::Tail;
  double train_fraction = 0.7;
  double validation_fraction = 0.1;
  /// Every window of the file is test and validation data (a file other than the training
  /// one, read with a checkpoint's window and standardisation).
  bool whole_file = false;
  /// Model input = (x - window centre) / x_scale; 0: window / 4.
  double x_scale = 0.0;
  /// Model output = (y - y_mean) / y_std per output; empty: the training part's statistics.
  std::vector<double> y_mean, y_std;
  /// Whether x was date-times (then in hours): recorded from the file, so that files of
  /// context and targets for the model can be checked against it.
  bool x_is_time = false;

  /// The standardisation, usable without the data (npe predict with a checkpoint):
  /// the model's input for x in a window centred at `centre` (x units), an output and back.
  double model_x(double x, double centre) const { return (x - centre) / x_scale; }
  double model_y(double y, size_t output) const {
    return (y - y_mean.at(output)) / y_std.at(output);
  }
  double data_y(double model_y, size_t output) const {
    return model_y * y_std.at(output) + y_mean.at(output);
  }

  nlohmann::json to_json() const;
  /// Throws ConfigError for a missing or invalid field.
  static SeriesTaskConfig from_json(const nlohmann::json& json);
  /// Throws ConfigError for settings that contradict each other.
  void validate() const;
};

/// Points of a series in the data's terms (x in x units: hours since some origin for
/// date-times; y [N, D_y] row-major) as the model's task, x measured from `centre`: how npe
/// predict and the 1-D tab give a series model context and targets.
Task series_task(const SeriesTaskConfig& config, const std::vector<double>& context_x,
                 const std::vector<float>& context_y, const std::vector<double>& target_x,
                 double centre);
/// A model's standardised prediction in the data's units: mean * y_std + y_mean, std * y_std.
Prediction series_prediction_in_data_units(const SeriesTaskConfig& config,
                                           const Prediction& standardised);

class SeriesTaskSource final : public TaskSource {
 public:
  /// Reads the file (once per file, columns and process) and resolves every automatic setting
  /// (window, points, standardisation), so that to_json() records what was used. Throws
  /// DataError for an unreadable file, ConfigError when no window of the split holds
  /// num_points points (naming the longest run there is).
  explicit SeriesTaskSource(SeriesTaskConfig config);

  std::string name() const override { return m_config.name; }
  int64_t dim_x() const override { return 1; }
  int64_t dim_y() const override { return m_data->dim_y(); }
  TaskBatch sample(int64_t batch_size, uint64_t seed, const Translation& tau = {},
                   Split split = Split::Train) const override;
  nlohmann::json to_json() const override { return m_config.to_json(); }
  /// Δ = 4: the window moves wholly outside [-2, 2], where every task was trained.
  static constexpr double kOutOfRangeShift = 4.0;
  Translation out_of_range_translation() const override { return {kOutOfRangeShift}; }
  double output_log_scale() const override;

  const SeriesTaskConfig& config() const { return m_config; }
  const SeriesData& data() const { return *m_data; }
  /// Model inputs and outputs in the data's units and back (x relative to a window that starts
  /// at `window_start`, in x units).
  double to_model_x(double x, double window_start) const;
  double from_model_x(double model_x, double window_start) const;
  double to_model_y(double y, int64_t output) const;
  double from_model_y(double model_y, int64_t output) const;
  /// Rows [begin, end) of each series a split draws from, and how many windows it has.
  struct Segment {
    size_t series = 0;
    int64_t begin = 0, end = 0;
  };
  const std::vector<Segment>& segments(Split split) const;
  int64_t num_windows(Split split) const;
  /// A window of a split as tasks draw from it: rows [begin, end) of one series, x from `start`
  /// (x units) to before start + window; the 1-D tab shows one.
  struct Window {
    size_t series = 0;
    int64_t begin = 0, end = 0;
    double start = 0.0;
  };
  /// Window `index` of a split (windows start at successive rows, in file order); throws
  /// ConfigError for an index outside [0, num_windows(split)).
  Window window(Split split, int64_t index) const;
  /// One paragraph for the user: the file, the split sizes, the window and points per task.
  std::string describe() const override;

 private:
  struct Windows {
    std::vector<Segment> segments;
    /// Windows by (segment, first row): a window starting at a row holds num_points rows.
    std::vector<std::pair<int32_t, int64_t>> starts;
  };
  const Windows& windows(Split split) const;

  SeriesTaskConfig m_config;
  std::shared_ptr<const SeriesData> m_data;
  Windows m_train, m_validation, m_test;
};

}  // namespace npe
