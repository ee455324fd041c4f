#include "npe/training/training.h"

#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/seeds.h"
#include "npe/training/training_job.h"

namespace npe {

nlohmann::json TrainOptions::to_json() const {
  return {{"steps", steps},
          {"batch_size", batch_size},
          {"accumulate", accumulate},
          {"learning_rate", learning_rate},
          {"lr_schedule", lr_schedule},
          {"weight_decay", weight_decay},
          {"grad_clip_value", grad_clip_value},
          {"seed", seed},
          {"validation_every", validation_every},
          {"validation_tasks", validation_tasks},
          {"keep_best", keep_best}};
}

TrainOptions TrainOptions::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError("training options are not a JSON object");
  TrainOptions o;
  read_json_field(json, "steps", o.steps, "training options");
  read_json_field(json, "batch_size", o.batch_size, "training options");
  read_json_field(json, "accumulate", o.accumulate, "training options");
  read_json_field(json, "learning_rate", o.learning_rate, "training options");
  read_json_field(json, "lr_schedule", o.lr_schedule, "training options");
  read_json_field(json, "weight_decay", o.weight_decay, "training options");
  read_json_field(json, "grad_clip_value", o.grad_clip_value, "training options");
  read_json_field(json, "seed", o.seed, "training options");
  read_json_field(json, "validation_every", o.validation_every, "training options");
  read_json_field(json, "validation_tasks", o.validation_tasks, "training options");
  read_json_field(json, "keep_best", o.keep_best, "training options");
  o.validate();
  return o;
}

void TrainOptions::validate() const {
  if (steps < 0) throw ConfigError("training steps must be >= 0");
  if (batch_size < 1) throw ConfigError("batch size must be >= 1");
  if (accumulate < 1) throw ConfigError("micro-batches per step (accumulate) must be >= 1");
  if (!(learning_rate > 0.0)) throw ConfigError("learning rate must be positive");
  if (lr_schedule != "constant" && lr_schedule != "cosine") {
    throw ConfigError("unknown learning-rate schedule '" + lr_schedule +
                      "' (known: constant, cosine)");
  }
  if (!(weight_decay >= 0.0)) throw ConfigError("weight decay must be >= 0");
  if (!(grad_clip_value > 0.0)) throw ConfigError("gradient clip value must be positive");
  if (validation_every < 0) throw ConfigError("validation interval must be >= 0");
  if (validation_tasks < 0) throw ConfigError("validation tasks must be >= 0");
}

std::filesystem::path best_checkpoint_path(const std::filesystem::path& checkpoint) {
  auto best = checkpoint;
  best.replace_extension(".best" + checkpoint.extension().string());
  return best;
}

uint64_t training_batch_seed(uint64_t seed, int64_t step, int64_t shard) {
  const auto single = derive_seed(seed, kTrainStream, static_cast<uint64_t>(step));
  return shard == 0 ? single : derive_seed(single, kTrainStream, static_cast<uint64_t>(shard));
}

TrainResult train_model(NeuralProcessImpl& model, const TaskSource& source,
                        const TrainOptions& options, const TrainingCallback& progress) {
  TrainingSpec spec;
  spec.model = model.config();
  spec.task = source.to_json();
  spec.size = "custom";
  spec.options = options;
  // Non-owning handles: the caller keeps the model and the source.
  TrainingJob job(std::move(spec), std::shared_ptr<NeuralProcessImpl>(&model, [](auto*) {}),
                  std::shared_ptr<const TaskSource>(&source, [](auto*) {}));
  return job.run(progress);
}

}  // namespace npe
