#pragma once
// One model the explorer can show: a loaded neural process or one of the GP baselines.

#include <memory>

#include <QColor>
#include <QString>

#include <torch/types.h>

#include "npe/model.h"

namespace npe::widgets {

struct ModelEntry {
  enum class Kind { Neural, GpOracle, GpFitted };
  Kind kind = Kind::Neural;
  /// Unique key: the checkpoint path for neural models, "gp-oracle" / "gp-fitted" otherwise.
  QString id;
  QString name;     ///< legend text, e.g. "TE-TNP"
  QString tooltip;  ///< what it is, whether translation equivariant, training figures
  QColor colour;
  bool enabled = false;
  bool translation_equivariant = false;
  /// Neural models only; used from the prediction worker thread alone.
  std::shared_ptr<NeuralProcessImpl> model;
  QString checkpoint_path;
};

/// Entry for a checkpoint file, with the model on `device`. Throws npe::CheckpointError.
ModelEntry load_model_entry(const QString& checkpoint_path, const QColor& colour,
                            torch::Device device = torch::kCPU);
/// Entries for the GP baselines.
ModelEntry gp_oracle_entry();
ModelEntry gp_fitted_entry();
/// A colour for the n-th model (distinct, print-friendly).
QColor model_colour(int index);

}  // namespace npe::widgets
