#pragma once
// What a user asks to train, by name: the task and the settings it overrides, the model kind
// with its size preset and the options it overrides, and the training settings. `npe train`'s
// options fill one, `npe train --spec FILE` reads one, and the Training tab writes one; resolve()
// turns it into the TrainingSpec a job runs, every default filled in, on the computer that
// trains (where the task's data is). One definition, so the tab and the command line cannot
// disagree about what a setting means or which values it takes.
//
// The file (to_json, from_json):
//   {"version": 1, "task": "tfmnist-central", "task_options": {"max_targets": 256},
//    "model": "tepttnp", "size": "small", "model_options": {"num_layers": 5},
//    "training": {"steps": 8000, "batch_size": 16, "lr_schedule": "cosine", "seed": 0}}
// Only "model" is required; a missing setting takes its default (TrainOptions, the task's and
// the size preset's), and a name that is not a setting is refused.

#include <string>

#include <nlohmann/json.hpp>

#include "npe/training/training.h"
#include "npe/training/training_job.h"

namespace npe {

struct TrainingRecipe {
  static constexpr int kVersion = 1;

  /// A registered task (task_infos()) and fields of its configuration it replaces.
  std::string task = "gp1d";
  nlohmann::json task_options = nlohmann::json::object();
  /// A model kind (model_infos()), its size preset (model_sizes()) and fields of the preset's
  /// configuration it replaces (a recipe with any is "custom" size in the checkpoint).
  std::string model;
  std::string size = "small";
  nlohmann::json model_options = nlohmann::json::object();
  /// The training settings, the seed among them (the device is where the job runs, not what it
  /// trains: not part of a recipe).
  TrainOptions training;

  nlohmann::json to_json() const;
  /// Throws ConfigError naming what is wrong: not an object, an unknown key, a value of the
  /// wrong type, a training setting out of its range (TrainOptions::validate), a newer version.
  static TrainingRecipe from_json(const nlohmann::json& json);

  /// The job: builds the task (reading its data: DataError when it is missing), the size
  /// preset's model configuration for it with the overrides applied and checked (ConfigError for
  /// an unknown kind, size, task or option, or a value out of range), and records `command` as
  /// the command line that started it.
  TrainingSpec resolve(const std::string& command) const;
};

}  // namespace npe
