#include "training/training_request.h"

#include <algorithm>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryFile>

#include <torch/cuda.h>

#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_config.h"
#include "npe/models/model_registry.h"
#include "npe/training/training_recipe.h"

namespace npe::widgets {
namespace {

// Whether a file can be created in the folder of `path` (creating the folder if needed).
QString writability_problem(const QString& path) {
  if (path.trimmed().isEmpty()) return QObject::tr("Choose an output file.");
  const QFileInfo info(path);
  if (info.exists() && info.isDir()) {
    return QObject::tr("The output path %1 is a folder; choose a file name.").arg(path);
  }
  const auto folder = info.absolutePath();
  if (!QDir().mkpath(folder)) return QObject::tr("Cannot create the folder %1.").arg(folder);
  QTemporaryFile probe(folder + "/.npe-write-test-XXXXXX");
  if (!probe.open()) {
    return QObject::tr("Cannot write to %1 (permission denied or read-only).").arg(folder);
  }
  return {};
}

}  // namespace

OptionDescription training_setting(const std::string& name) {
  for (auto& field : describe_fields(TrainOptions{}.visit_fields())) {
    if (field.name == name) return field;
  }
  throw ConfigError("no training setting '" + name + "'");
}

std::optional<OptionDescription> modelOption(const QString& kind, const QString& name) {
  try {
    const ModelConfig config(kind.toStdString());
    for (auto& option : describe_options(*config.all_options())) {
      if (option.name == name.toStdString()) return option;
    }
  } catch (const Error&) {
  }
  return std::nullopt;
}

nlohmann::json TrainingRequest::taskSettings() const {
  auto settings = nlohmann::json::object();
  for (const auto& item : task_options.split(' ', Qt::SkipEmptyParts)) {
    const auto eq = item.indexOf('=');
    if (eq <= 0) {
      throw ConfigError("task option '" + item.toStdString() +
                        "' is not KEY=VALUE (e.g. y=OT window=48)");
    }
    const auto text = item.mid(eq + 1).toStdString();
    // Numbers and true/false as JSON, anything else as text (as npe train --task-option).
    auto value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    settings[item.left(eq).toStdString()] = value.is_discarded() ? nlohmann::json(text) : value;
  }
  if (!data_path.trimmed().isEmpty()) settings["data"] = data_path.trimmed().toStdString();
  return settings;
}

TrainingRecipe TrainingRequest::recipe() const {
  TrainingRecipe recipe;
  recipe.task = task.toStdString();
  recipe.task_options = taskSettings();
  recipe.model = model.toStdString();
  recipe.size = size == "custom" ? "small" : size.toStdString();
  if (size == "custom") {
    // Only the widths the kind has: a recipe naming another kind's setting is refused.
    auto option = [&](const QString& name, int value) {
      if (modelOption(model, name)) recipe.model_options[name.toStdString()] = value;
    };
    option("dim_model", dim_model);
    option("num_layers", num_layers);
    option("num_heads", num_heads);
    option("head_dim", dim_model / std::max(1, num_heads));
    option("num_pseudo_tokens", num_pseudo_tokens);
  }
  if (centre_per_task) recipe.model_options["centre_per_task"] = true;
  auto& training = recipe.training;
  training.steps = steps;
  training.batch_size = batch_size;
  training.learning_rate = learning_rate;
  training.seed = static_cast<uint64_t>(std::max(0, seed));
  training.validation_every = validation_every;
  training.validation_tasks = validation_tasks;
  return recipe;
}

QStringList TrainingRequest::arguments() const {
  QStringList args{"train"};
  if (!resume_path.isEmpty()) {
    args << "--resume" << host.host_path(resume_path) << "--steps" << QString::number(steps);
  } else {
    args << "--spec"
         << "-";  // the recipe: the first line of standard input (recipeLine)
  }
  args << "--device" << device << "--checkpoint-every" << QString::number(checkpoint_every)
       << "--out" << host.host_path(output_path) << "--progress-json";
  return args;
}

QByteArray TrainingRequest::recipeLine() const {
  if (!resume_path.isEmpty()) return {};
  return QByteArray::fromStdString(recipe().to_json().dump()) + '\n';
}

QString TrainingRequest::label() const {
  if (!resume_path.isEmpty()) return QFileInfo(resume_path).fileName();
  try {
    return QString::fromStdString(model_info(model.toStdString()).display_name) + " · " + task;
  } catch (const Error&) {
    return model + " · " + task;
  }
}

QStringList validate_request(const TrainingRequest& r) {
  QStringList problems;
  TrainingRecipe recipe;
  try {
    recipe = r.recipe();
  } catch (const Error& e) {
    return {QString::fromStdString(e.what())};
  }
  try {
    recipe.training.validate();  // the ranges npe train checks
  } catch (const Error& e) {
    problems << QString::fromStdString(e.what());
  }
  if (const auto p = r.host.problem(); !p.isEmpty()) problems << p;
  if (r.device == "cuda" && !r.host.remote() && !torch::cuda::is_available()) {
    problems << QObject::tr("CUDA was chosen but no CUDA GPU is available to this libtorch.");
  }
  if (r.checkpoint_every < 0) problems << QObject::tr("Checkpoint interval must be >= 0.");
  if (const auto p = writability_problem(r.output_path); !p.isEmpty()) problems << p;
  if (!r.resume_path.isEmpty()) {
    try {
      const auto meta = read_checkpoint_metadata(r.resume_path.toStdString());
      if (r.steps < meta.steps) {
        problems << QObject::tr(
                        "The checkpoint is already at step %1; steps must be at least that.")
                        .arg(meta.steps);
      }
    } catch (const Error& e) {
      problems << QString::fromStdString(e.what());
    }
    return problems;
  }
  if (r.size == "custom" && r.num_heads >= 1 && r.dim_model % r.num_heads != 0) {
    // The form derives each head's width from D_z and the heads.
    problems << QObject::tr("D_z (%1) must be a multiple of the heads (%2).")
                    .arg(r.dim_model)
                    .arg(r.num_heads);
    return problems;
  }
  try {
    // What npe train will do with the recipe: building the task reads its data (a missing
    // dataset is reported here, not mid-run), and building the model checks the sizes.
    make_model(recipe.resolve({}).model);
  } catch (const DataError& e) {
    // The host has its own copy of the data (or says in the log that it has none).
    // Data copied there is read here first.
    if (!r.host.remote() || r.copy_data_to_host) problems << QString::fromStdString(e.what());
  } catch (const Error& e) {
    problems << QString::fromStdString(e.what());
  }
  return problems;
}

QString npe_executable() {
  if (auto env = qEnvironmentVariable("NPE_EXECUTABLE"); !env.isEmpty()) return env;
  const QStringList candidates = {
      QCoreApplication::applicationDirPath() + "/npe",
#ifdef NPE_BUILD_TREE_NPE
      QStringLiteral(NPE_BUILD_TREE_NPE),
#endif
  };
  for (const auto& path : candidates) {
    if (QFileInfo(path).isExecutable()) return path;
  }
  return QStandardPaths::findExecutable("npe");
}

}  // namespace npe::widgets
