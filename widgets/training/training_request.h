#pragma once
// What the training form asks for, checked before anything starts, and handed to `npe train` as
// core's TrainingRecipe (`--spec -`, the recipe on its standard input): the tab and the command
// line resolve the same recipe the same way.

#include <optional>

#include <QByteArray>
#include <QString>
#include <QStringList>

#include "npe/option_fields.h"
#include "npe/training/training_recipe.h"
#include "training/training_host.h"

namespace npe::widgets {

struct TrainingRequest {
  /// Continue this checkpoint's job (everything else but steps and device is the checkpoint's).
  QString resume_path;
  QString task = QStringLiteral("gp1d");
  /// The task's data file (series: the user's CSV; era5: a NetCDF or GRIB file), or empty for
  /// the task's own. On an SSH host it is a path on that host, unless copy_data_to_host.
  QString data_path;
  /// SSH hosts: data_path is here; the job copies it to the host (host_data_path) before it
  /// starts, and trains on the copy.
  bool copy_data_to_host = false;
  /// More settings of the task, "KEY=VALUE" separated by spaces ("y=OT window=48"), as
  /// `npe train --task-option` takes them.
  QString task_options;
  QString model = QStringLiteral("tetnp");
  /// "small", "paper" or "custom" (then the widths below apply).
  QString size = QStringLiteral("small");
  int dim_model = 64;
  int num_layers = 4;
  int num_heads = 4;
  int num_pseudo_tokens = 32;
  /// The model option centre_per_task (ModelConfig): each task centred on its context's mean.
  bool centre_per_task = false;
  int steps = 2000;
  int batch_size = 16;
  double learning_rate = 5e-4;
  int seed = 0;
  /// "auto", "cpu" or "cuda" (on the host).
  QString device = QStringLiteral("auto");
  /// Where the job runs. On an SSH host it writes host.host_path(output_path) there, and
  /// output_path here is where each checkpoint is copied back.
  TrainingHost host = this_computer();
  QString output_path;
  int checkpoint_every = 100;
  int validation_every = 100;
  int validation_tasks = 64;

  /// What to train, as core's recipe (a new job; a resumed one trains its checkpoint's).
  /// Throws ConfigError for task options that are not KEY=VALUE.
  TrainingRecipe recipe() const;
  /// data_path and task_options as the task's settings (what recipe() puts in task_options).
  /// Throws ConfigError naming an item that is not KEY=VALUE.
  nlohmann::json taskSettings() const;
  /// Arguments of `npe` (after the executable): "train --spec - ... --progress-json" for a new
  /// job, "train --resume ..." for a resumed one, with the paths the host sees.
  QStringList arguments() const;
  /// The first line the job's standard input gets: recipe() as JSON (empty when resuming).
  QByteArray recipeLine() const;
  /// Short label for lists: "TE-TNP · gp1d" (or the checkpoint's file name when resuming).
  QString label() const;
};

/// The model kind's option `name` (ModelSpec::options) with its range and help, or nothing
/// when the kind has no such option: the custom-width fields a form shows for that kind, with
/// the option's own limits, and passes to `npe train`.
std::optional<OptionDescription> modelOption(const QString& kind, const QString& name);

/// A training setting (TrainOptions::fields: "steps", "batch_size", "learning_rate",
/// "validation_every", ...) with its range and help as core defines them, for the form's fields.
OptionDescription training_setting(const std::string& name);

/// Problems with the request, one sentence each (empty when it can start): unknown or
/// incompatible model, invalid sizes, a task whose data is missing, an output path that cannot
/// be written, CUDA chosen without a GPU, a checkpoint that cannot be resumed. For an SSH host
/// the data and the devices are the host's: npe there reports their problems in the job's log.
QStringList validate_request(const TrainingRequest& request);

/// Where `npe` is: $NPE_EXECUTABLE, next to this program (installed), or the build tree's.
/// Empty when none is found.
QString npe_executable();

}  // namespace npe::widgets
