#pragma once
// npe predict for a model trained on the user's own series (the `series` task): context and
// targets are files with the model's column names (dates included), and the predictions are
// written in the data's units, with the date-times the targets file gave.

#include <string>

#include "npe/data/series_tasks.h"
#include "npe/predictors/predictor.h"

namespace npe::cli {

struct SeriesPredictArguments {
  std::string context, targets, out;
  int64_t chunk = 4096;
};

/// Predicts with `predictor`, whose checkpoint's task is `config`. Throws DataError for files
/// that lack the model's columns or write x otherwise (numbers for date-times).
int run_predict_series(const SeriesPredictArguments& arguments, Predictor& predictor,
                       const SeriesTaskConfig& config);

}  // namespace npe::cli
