#pragma once
// One model an explorer tab can show: a predictor from the core registry plus how it is drawn.

#include <memory>
#include <string>
#include <vector>

#include <QColor>
#include <QIcon>
#include <QString>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "npe/predictors/predictor.h"

namespace npe::widgets {

struct ModelEntry {
  /// Unique key within a tab: "shipped:<file stem>", a checkpoint path, or a baseline's name.
  QString id;
  QString name;     ///< legend text, e.g. "TE-TNP"
  QString tooltip;  ///< what it is, whether translation equivariant, training figures
  QColor colour;
  bool enabled = false;
  PredictorCapabilities capabilities;
  /// Used from the prediction worker thread only.
  std::shared_ptr<Predictor> predictor;
  /// Optional slower, more accurate variant for the settled ("refined") round (fitted GPs with
  /// more iterations); the interactive rounds use `predictor`.
  std::shared_ptr<Predictor> refined_predictor;
  QString checkpoint_path;
  /// The task configuration the checkpoint was trained on (TaskSource::to_json()); null for
  /// baselines.
  nlohmann::json task;
  /// The model's outputs per point (D_y: 3 for colour pictures); 0 for baselines, which take
  /// any number.
  int64_t outputs = 0;
};

/// Entry for a checkpoint file, with the model on `device`. Throws npe::CheckpointError.
ModelEntry load_model_entry(const QString& checkpoint_path, const QColor& colour,
                            torch::Device device = torch::kCPU);
/// Entries for the checkpoints shipped for a task folder ("gp1d", "tfmnist"), with ids
/// "shipped:<file stem>" and colours from model_colour(first_colour) on. Unreadable files are
/// skipped with a warning on stderr. A shipped snapshot of an unfinished run is named like a
/// finished model (its tooltip says where it stopped); load_model_entry marks it "training".
std::vector<ModelEntry> shipped_entries(const std::string& models_folder, int first_colour,
                                        torch::Device device = torch::kCPU);
/// Entry for a GP baseline of the registry ("gp-oracle", "gp-fitted", "gp-se-ard"), fitted with
/// `interactive_iterations` while the user edits and `refined_iterations` once they pause, and
/// limited to `max_context` context points (its cost grows as the cube; the tab reports the
/// limit instead of appearing frozen).
ModelEntry baseline_entry(const std::string& name, int interactive_iterations = 60,
                          int refined_iterations = 500, int64_t max_context = 2000);
/// A colour for the n-th model (distinct, print-friendly).
QColor model_colour(int index);
/// A small square icon of the colour (model lists and metric tables).
QIcon colour_icon(const QColor& colour);

}  // namespace npe::widgets
