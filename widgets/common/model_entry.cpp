#include "model_entry.h"

#include <cmath>

#include <QIcon>
#include <QObject>
#include <QPixmap>

#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_catalog.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/predictors/torchscript_predictor.h"

namespace npe::widgets {
namespace {

// What the user can rely on: equivariance, and whether samples are coherent functions.
QString capability_sentences(const PredictorCapabilities& caps) {
  return (caps.translation_equivariant ? QObject::tr("Translation equivariant.")
                                       : QObject::tr("Not translation equivariant.")) +
         "\n" +
         (caps.joint ? QObject::tr("Predicts the targets jointly: draws coherent function samples.")
                     : QObject::tr("Predicts each target independently: it cannot draw coherent "
                                   "function samples."));
}

// A checkpoint the user opened, or one shipped with the application (a product default: a
// snapshot of a longer run is no longer "training" for the person looking at it).
enum class Origin { opened, shipped };

ModelEntry checkpoint_entry(const QString& checkpoint_path, const QColor& colour,
                            torch::Device device, Origin origin) {
  const auto path = checkpoint_path.toStdString();
  const auto meta = read_model_metadata(path);
  std::shared_ptr<Predictor> predictor = load_predictor(path, device);
  const auto& info = predictor->info();
  ModelEntry entry;
  entry.id = checkpoint_path;
  entry.checkpoint_path = checkpoint_path;
  entry.name = QString::fromStdString(info.display_name);
  // Larger than the CPU-trainable default: told apart from a small model of the same kind.
  if (meta.size == "medium" || meta.size == "paper") {
    entry.name += QObject::tr(" · %1 size").arg(QString::fromStdString(meta.size));
  }
  // A TE model that reads the context's own frequencies (issue 105) is told apart from the
  // plain one of its kind and size.
  const auto* te = meta.model.find_options<TeAttentionOptions>();
  if (te && te->context_frequencies > 0) entry.name += QObject::tr(" · spectral");
  // A checkpoint written while its job trains says how far it has come (the best model of a
  // finished run is not one); a shipped snapshot of an unfinished run says so in its tooltip.
  const bool unfinished = meta.planned_steps > meta.steps && !meta.best_of_run;
  if (unfinished && origin == Origin::opened) {
    entry.name += QObject::tr(" · training, step %1 of %2").arg(meta.steps).arg(meta.planned_steps);
  }
  entry.capabilities = info.capabilities;
  entry.colour = colour;
  entry.predictor = predictor;
  entry.task = meta.task;
  entry.outputs = meta.model.dim_y;
  QString tooltip =
      QString::fromStdString(info.description) + "\n" + capability_sentences(info.capabilities);
  if (meta.model.kind == kTorchScriptKind) {
    // Not trained here: no steps or sizes to tell; the author's claim of equivariance is what
    // the tab's readout then measures.
    const auto task = meta.task_name();
    if (!task.empty()) tooltip += "\n" + QObject::tr("A model of the %1 task").arg(task.c_str());
    entry.tooltip = tooltip + "\n" + checkpoint_path;
    return entry;
  }
  const auto task = meta.task_name();
  tooltip += "\n" + QObject::tr("Trained on %1 for %2 steps (%3 size)")
                        .arg(QString::fromStdString(task.empty() ? "an unnamed task" : task))
                        .arg(meta.steps)
                        .arg(QString::fromStdString(meta.size.empty() ? "custom" : meta.size));
  if (meta.best_of_run) {
    tooltip += QObject::tr(", the best validation of a %1-step run").arg(meta.planned_steps);
  } else if (unfinished) {
    tooltip += QObject::tr(", stopped there in a %1-step run").arg(meta.planned_steps);
  }
  if (std::isfinite(meta.validation_ll)) {
    tooltip += QObject::tr(", validation log-likelihood %1").arg(meta.validation_ll, 0, 'f', 3);
  }
  if (te && te->context_frequencies > 0) {
    tooltip += "\n" + QObject::tr(
                          "Spectral: its attention also sees the context's %1 strongest "
                          "frequencies (its periodogram's peaks), so it can continue an "
                          "oscillation beyond the data")
                          .arg(te->context_frequencies);
  }
  tooltip += "\n" + checkpoint_path;
  entry.tooltip = tooltip;
  return entry;
}

}  // namespace

ModelEntry load_model_entry(const QString& checkpoint_path, const QColor& colour,
                            torch::Device device) {
  return checkpoint_entry(checkpoint_path, colour, device, Origin::opened);
}

std::vector<ModelEntry> shipped_entries(const std::string& models_folder, int first_colour,
                                        torch::Device device) {
  std::vector<std::string> problems;
  std::vector<ModelEntry> entries;
  for (const auto& shipped : find_shipped_models(models_folder, &problems)) {
    try {
      auto entry = checkpoint_entry(QString::fromStdString(shipped.path.string()),
                                    model_colour(first_colour + static_cast<int>(entries.size())),
                                    device, Origin::shipped);
      entry.id = "shipped:" + QString::fromStdString(shipped.path.stem().string());
      entries.push_back(std::move(entry));
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
  for (const auto& problem : problems) {
    qWarning("np-explorer: skipped a shipped model: %s", problem.c_str());
  }
  return entries;
}

ModelEntry baseline_entry(const std::string& name, int interactive_iterations,
                          int refined_iterations, int64_t max_context) {
  const auto& info = predictor_info(name);
  ModelEntry entry;
  entry.id = QString::fromStdString(name);
  entry.name = QString::fromStdString(info.display_name);
  entry.capabilities = info.capabilities;
  PredictorOptions fast, refined;
  fast.fitted.iterations = interactive_iterations;
  refined.fitted.iterations = refined_iterations;
  fast.gp_max_context = refined.gp_max_context = max_context;
  entry.predictor = make_predictor(name, fast);
  // Only the fitted baselines have iterations to refine once the user pauses.
  const bool fitted = !info.capabilities.needs_oracle && !info.capabilities.needs_gp_prior;
  if (fitted) entry.refined_predictor = make_predictor(name, refined);
  entry.colour = info.capabilities.needs_oracle     ? QColor(0, 0, 0)
                 : info.capabilities.needs_gp_prior ? QColor(110, 60, 160)
                                                    : QColor(120, 120, 120);
  QString tooltip = QString::fromStdString(info.description);
  if (fitted) {
    tooltip += "\n" + QObject::tr(
                          "Fitted with %1 Adam iterations while you edit, %2 once you "
                          "pause.")
                          .arg(interactive_iterations)
                          .arg(refined_iterations);
  }
  tooltip +=
      "\n" +
      QObject::tr("Limited to %1 context points (the cost grows as the cube).").arg(max_context);
  entry.tooltip = tooltip + "\n" + capability_sentences(info.capabilities);
  return entry;
}

QColor model_colour(int index) {
  // Enough distinct colours for every shipped 1-D model plus the GP baselines before one
  // repeats.
  static const QColor palette[] = {
      QColor(31, 119, 180),  QColor(214, 39, 40), QColor(44, 160, 44),   QColor(255, 127, 14),
      QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(23, 190, 207),
      QColor(188, 189, 34),  QColor(0, 95, 95),   QColor(160, 0, 90),    QColor(100, 100, 220),
      QColor(0, 150, 100),   QColor(120, 80, 0)};
  constexpr int kColours = int(sizeof palette / sizeof palette[0]);
  return palette[((index % kColours) + kColours) % kColours];
}

QIcon colour_icon(const QColor& colour) {
  QPixmap pixmap(14, 14);
  pixmap.fill(colour);
  return QIcon(pixmap);
}

}  // namespace npe::widgets
