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
#include "npe/models/size_preset.h"
#include "npe/training/training.h"

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

// The request's training settings as core's.
TrainOptions training_options(const TrainingRequest& r) {
  TrainOptions options;
  options.steps = r.steps;
  options.batch_size = r.batch_size;
  options.learning_rate = r.learning_rate;
  options.validation_every = r.validation_every;
  options.validation_tasks = r.validation_tasks;
  return options;
}

}  // namespace

OptionDescription training_setting(const std::string& name) {
  for (auto& field : describe_fields(TrainOptions{}.visit_fields())) {
    if (field.name == name) return field;
  }
  throw ConfigError("no training setting '" + name + "'");
}

bool modelHasOption(const QString& kind, const QString& name) {
  try {
    const ModelConfig config(kind.toStdString());
    return options_to_json(*config.all_options()).contains(name.toStdString());
  } catch (const Error&) {
    return false;
  }
}

QStringList TrainingRequest::arguments() const {
  QStringList args{"train"};
  if (!resume_path.isEmpty()) {
    args << "--resume" << host.host_path(resume_path) << "--steps" << QString::number(steps);
  } else {
    args << "--task" << task << "--model" << model << "--steps" << QString::number(steps)
         << "--batch-size" << QString::number(batch_size) << "--lr"
         << QString::number(learning_rate, 'g', 10) << "--seed" << QString::number(seed)
         << "--val-every" << QString::number(validation_every) << "--val-tasks"
         << QString::number(validation_tasks);
    if (size == "custom") {
      args << "--size"
           << "small";
      // Only the widths the kind has: npe train refuses another kind's settings.
      auto option = [&](const QString& name, int value) {
        if (modelHasOption(model, name))
          args << "--model-option" << name + "=" + QString::number(value);
      };
      option("dim_model", dim_model);
      option("num_layers", num_layers);
      option("num_heads", num_heads);
      option("head_dim", dim_model / std::max(1, num_heads));
      option("num_pseudo_tokens", num_pseudo_tokens);
    } else {
      args << "--size" << size;
    }
  }
  args << "--device" << device << "--checkpoint-every" << QString::number(checkpoint_every)
       << "--out" << host.host_path(output_path) << "--progress-json";
  return args;
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
  try {
    training_options(r).validate();  // the ranges npe train checks
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
  try {
    // Building the task reads its data (a missing dataset is reported here, not mid-run), and
    // building the model checks the sizes as `npe train` will.
    const auto source = make_task_source(r.task.toStdString());
    auto config = default_model_config(
        r.model.toStdString(), r.size == "custom" ? "small" : r.size.toStdString(), *source);
    if (r.size == "custom") {
      if (r.dim_model < 1 || r.num_layers < 1 || r.num_heads < 1 || r.num_pseudo_tokens < 1) {
        throw ConfigError("every width must be at least 1");
      }
      if (r.dim_model % r.num_heads != 0) {
        throw ConfigError("D_z (" + std::to_string(r.dim_model) +
                          ") must be a multiple of the heads (" + std::to_string(r.num_heads) +
                          ")");
      }
      SizePreset custom;
      custom.dim_model = r.dim_model;
      custom.num_layers = r.num_layers;
      custom.num_heads = r.num_heads;
      custom.head_dim = r.dim_model / r.num_heads;
      custom.num_pseudo_tokens = r.num_pseudo_tokens;
      custom.apply_to(config);
    }
    make_model(config);
  } catch (const DataError& e) {
    // The host has its own copy of the data (or says in the log that it has none).
    if (!r.host.remote()) problems << QString::fromStdString(e.what());
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
