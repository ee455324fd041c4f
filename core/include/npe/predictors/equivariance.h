#pragma once
// The translation-equivariance metric every tool reports.

#include "npe/data/task_source.h"
#include "npe/predictors/predictor.h"

namespace npe {

/// Largest absolute difference between two predictions of the same targets, over means and
/// standard deviations: max(|mean_a - mean_b|, |stddev_a - stddev_b|). Throws
/// InvalidInputError when the shapes differ.
double prediction_difference(const Prediction& a, const Prediction& b);

/// Equivariance error of `predictor` at translation tau: the difference between its prediction
/// for the batch and its prediction for the batch with every input translated by tau. Zero for
/// an exactly translation-equivariant predictor (up to rounding). `prediction` may pass the
/// already computed prediction of `batch` to save one call.
double equivariance_error(Predictor& predictor, const TaskBatch& batch, const Translation& tau,
                          const Prediction* prediction = nullptr);

}  // namespace npe
