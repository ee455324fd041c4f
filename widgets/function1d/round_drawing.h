#pragma once
// Drawing a prediction round on the 1-D plot: what each model predicted, as the plot shows it.

#include <QStringList>

namespace npe::widgets {

class FunctionPlot;
class ModelList;
struct PredictionResult;

/// Draws each model of the round that is in `models` and enabled: its mean and ±2σ curve (the
/// legend names the context subset it saw, if any) and its samples when it drew some. Removes
/// the curves of models that failed or were switched off. Returns one "<model>: no samples:
/// <why>" line per model whose samples failed, for the status bar.
QStringList draw_round(FunctionPlot& plot, const PredictionResult& round, const ModelList& models);

}  // namespace npe::widgets
