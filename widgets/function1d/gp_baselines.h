#pragma once
// The 1-D tab's Gaussian-process baselines: the oracle (the true kernel), the Bayes-optimal
// predictor of the models' training prior, and a GP fitted to the context.

namespace npe::widgets {

class ExplorerController;

/// Adds the three baselines to the tab's models; only the oracle starts enabled.
void add_gp_baselines(ExplorerController& controller);

}  // namespace npe::widgets
