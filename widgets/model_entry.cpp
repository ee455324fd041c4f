#include "model_entry.h"

#include <cmath>

#include "npe/checkpoint.h"
#include "npe/model_registry.h"

namespace npe::widgets {

ModelEntry load_model_entry(const QString& checkpoint_path, const QColor& colour,
                            torch::Device device) {
  auto loaded = load_checkpoint(checkpoint_path.toStdString(), device);
  const auto& meta = loaded.metadata;
  const auto& info = model_info(meta.model.kind);
  ModelEntry entry;
  entry.kind = ModelEntry::Kind::Neural;
  entry.id = checkpoint_path;
  entry.checkpoint_path = checkpoint_path;
  entry.name = QString::fromStdString(info.display_name);
  entry.translation_equivariant = info.translation_equivariant;
  entry.colour = colour;
  entry.model = loaded.model;
  QString tooltip = QString::fromStdString(info.description) + "\n" +
                    (info.translation_equivariant ? QObject::tr("Translation equivariant.")
                                                  : QObject::tr("Not translation equivariant."));
  tooltip += "\n" + QObject::tr("Trained %1 steps (%2 size)")
                        .arg(meta.steps)
                        .arg(QString::fromStdString(meta.size.empty() ? "custom" : meta.size));
  if (std::isfinite(meta.validation_ll)) {
    tooltip += QObject::tr(", validation log-likelihood %1").arg(meta.validation_ll, 0, 'f', 3);
  }
  tooltip += "\n" + checkpoint_path;
  entry.tooltip = tooltip;
  return entry;
}

ModelEntry gp_oracle_entry() {
  ModelEntry entry;
  entry.kind = ModelEntry::Kind::GpOracle;
  entry.id = "gp-oracle";
  entry.name = QObject::tr("GP (true kernel)");
  entry.tooltip = QObject::tr(
      "Exact GP posterior with the kernel, lengthscale and noise chosen under Ground truth: the "
      "best any model can do on this data.\nTranslation equivariant (stationary kernel).");
  entry.colour = QColor(0, 0, 0);
  entry.translation_equivariant = true;
  return entry;
}

ModelEntry gp_fitted_entry() {
  ModelEntry entry;
  entry.kind = ModelEntry::Kind::GpFitted;
  entry.id = "gp-fitted";
  entry.name = QObject::tr("GP (fitted)");
  entry.tooltip = QObject::tr(
      "GP whose kernel family and hyperparameters are fitted to the context by maximising the "
      "marginal likelihood (fewer iterations while dragging, refined when you stop).\n"
      "Translation equivariant (stationary kernels).");
  entry.colour = QColor(120, 120, 120);
  entry.translation_equivariant = true;
  return entry;
}

QColor model_colour(int index) {
  static const QColor palette[] = {
      QColor(31, 119, 180),  QColor(214, 39, 40), QColor(44, 160, 44),   QColor(255, 127, 14),
      QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(23, 190, 207)};
  return palette[index % 8];
}

}  // namespace npe::widgets
