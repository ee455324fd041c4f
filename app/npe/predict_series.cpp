#include "predict_series.h"

#include <cmath>
#include <cstdio>

#include "npe/data/date_time.h"
#include "npe/data/point_table.h"
#include "npe/data/series_file.h"
#include "npe/errors.h"
#include "npe/ground/prediction.h"
#include "npe/predictors/chunked_prediction.h"

namespace npe::cli {
namespace {

// Every row of a file in x order, in absolute x (hours since 1970 for date-times, so that the
// context and the targets files share an origin), for the model's columns.
SeriesData read_for_model(const std::string& path, const SeriesTaskConfig& config,
                          bool inputs_only) {
  SeriesColumns columns;
  columns.x = config.columns.x;
  columns.y = config.columns.y;
  // A file of several series (the training file, say) is refused below, not merged.
  columns.id = config.columns.id;
  columns.id_if_present = true;
  columns.inputs_only = inputs_only;
  auto data = read_series_file(path, columns);
  if (data.x_is_time != config.x_is_time) {
    throw DataError("'" + path + "': x ('" + data.x_name + "') is " +
                    (data.x_is_time ? "date-times" : "numbers") + ", the model's was " +
                    (config.x_is_time ? "date-times" : "numbers"));
  }
  if (data.series.size() != 1) {
    throw DataError("'" + path + "' has " + std::to_string(data.series.size()) +
                    " series: give one series' points");
  }
  if (data.x_is_time) {
    for (auto& x : data.series[0].x) x += data.time_origin / 3600.0;
  }
  return data;
}

}  // namespace

int run_predict_series(const SeriesPredictArguments& a, Predictor& predictor,
                       const SeriesTaskConfig& config) {
  const auto context = read_for_model(a.context, config, /*inputs_only=*/false);
  const auto targets = read_for_model(a.targets, config, /*inputs_only=*/true);
  const auto& cs = context.series[0];
  const auto& ts = targets.series[0];
  const auto dim_y = config.y_mean.size();
  // The model's window is centred on the points, so a model that is not translation
  // equivariant sees them where it was trained.
  const auto [low, high] = std::minmax({cs.x.front(), cs.x.back(), ts.x.front(), ts.x.back()});
  const double centre = 0.5 * (low + high);
  // Training windows lie on [-2, 2]: a model that is not translation equivariant never saw
  // inputs beyond, which points spanning more than a window reach.
  if (!predictor.info().capabilities.translation_equivariant && high - low > config.window) {
    std::fprintf(stderr,
                 "npe predict: the points span %.6g%s, more than the model's window of %.6g%s: "
                 "%s is not translation equivariant and predicts there where it was never "
                 "trained\n",
                 high - low, config.x_is_time ? " h" : "", config.window,
                 config.x_is_time ? " h" : "", predictor.info().display_name.c_str());
  }
  const auto task = series_task(config, cs.x, cs.y, ts.x, centre);
  const auto prediction =
      series_prediction_in_data_units(config, predict_in_chunks(predictor, task, a.chunk));
  const auto mean = prediction.mean[0].to(torch::kFloat64).contiguous();
  const auto stddev = prediction.stddev[0].to(torch::kFloat64).contiguous();
  if (!torch::isfinite(mean).all().item<bool>() || !torch::isfinite(stddev).all().item<bool>()) {
    throw Error("the prediction is not finite (NaN or infinite): nothing written");
  }

  // The table: x as the targets file wrote it (date-times in one form), the targets' own y when
  // it has them, then the mean and standard deviation of each output, named after it.
  PointTable out;
  out.columns.push_back(config.columns.x);
  const bool scored = targets.dim_y() == static_cast<int64_t>(dim_y);
  for (const auto& name : config.columns.y) {
    if (scored) out.columns.push_back(name);
  }
  for (const auto& name : config.columns.y) out.columns.push_back(name + "_mean");
  for (const auto& name : config.columns.y) out.columns.push_back(name + "_std");
  std::vector<std::string> labels;
  double ll_sum = 0.0;
  int64_t ll_count = 0;
  const auto* m = mean.data_ptr<double>();
  const auto* s = stddev.data_ptr<double>();
  for (size_t i = 0; i < ts.x.size(); ++i) {
    auto& row = out.rows.emplace_back();
    row.push_back(ts.x[i]);
    for (size_t k = 0; scored && k < dim_y; ++k) {
      const double y = ts.y[i * dim_y + k];
      row.push_back(y);
      if (std::isfinite(y)) {
        ll_sum += gaussian_log_density(y, m[i * dim_y + k], s[i * dim_y + k]);
        ++ll_count;
      }
    }
    for (size_t k = 0; k < dim_y; ++k) row.push_back(m[i * dim_y + k]);
    for (size_t k = 0; k < dim_y; ++k) row.push_back(s[i * dim_y + k]);
    if (config.x_is_time) labels.push_back(format_date_time(ts.x[i] * 3600.0));
  }
  write_point_table(a.out, out, labels);
  std::printf("%s: %zu targets from %zu context points, in the data's units, written to %s\n",
              predictor.info().display_name.c_str(), ts.x.size(), cs.x.size(), a.out.c_str());
  if (ll_count > 0) {
    std::printf(
        "  the targets' outputs under the predictive marginals: mean log-likelihood %.4f "
        "(%lld values, in the data's units)\n",
        ll_sum / static_cast<double>(ll_count), static_cast<long long>(ll_count));
  }
  return 0;
}

}  // namespace npe::cli
