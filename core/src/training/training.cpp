#include "npe/training/training.h"

#include <cmath>

#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/seeds.h"
#include "npe/training/training_job.h"

namespace npe {

namespace {
const char* const kTrainingWhat = "training options";
}  // namespace

void TrainOptions::fields(OptionVisitor& v) {
  v.field("steps", steps, 1, 1'000'000'000,
          "Training steps (with --resume: the new total, to extend a run)");
  v.field("batch_size", batch_size, 1, kMaxBatchSize, "Tasks per micro-batch");
  v.field("accumulate", accumulate, 1, 65'536,
          "Micro-batches per step whose gradients are averaged (a step sees accumulate x "
          "batch-size tasks per process)");
  v.field("learning_rate", learning_rate, 1e-6, 1.0, "Peak AdamW learning rate");
  v.field("lr_schedule", lr_schedule, {"constant", "cosine"},
          "Learning-rate schedule: constant, or cosine decay to 0 over the steps");
  v.field("weight_decay", weight_decay, 0.0, 10.0, "AdamW weight decay");
  v.field("grad_clip_value", grad_clip_value, 1e-6, 1e6,
          "Gradient values are clipped to [-value, value]");
  v.field("validation_every", validation_every, 0, 1'000'000'000,
          "Validate every N steps (0: only at the end)");
  v.field("validation_tasks", validation_tasks, 0, 1'000'000, "Validation tasks");
  v.field("keep_best", keep_best,
          "Also keep the model of the best validation so far (OUT.best.pt), for runs that "
          "overfit");
}

FieldVisit TrainOptions::visit_fields() const {
  auto copy = std::make_shared<TrainOptions>(*this);
  return [copy](OptionVisitor& v) { copy->fields(v); };
}

nlohmann::json TrainOptions::to_json() const {
  auto json = fields_to_json(visit_fields());
  json["seed"] = seed;
  return json;
}

TrainOptions TrainOptions::from_json(const nlohmann::json& json) {
  TrainOptions o;
  fields_from_json([&](OptionVisitor& v) { o.fields(v); }, json, kTrainingWhat);
  read_json_field(json, "seed", o.seed, kTrainingWhat);
  o.check_trainable();
  return o;
}

void TrainOptions::validate() const {
  check_field_ranges(visit_fields(), kTrainingWhat);
}

void TrainOptions::check_trainable() const {
  auto need = [](bool holds, const std::string& what) {
    if (!holds) throw ConfigError(std::string(kTrainingWhat) + ": " + what);
  };
  need(steps >= 0, "steps must be >= 0");
  need(batch_size >= 1, "batch_size must be >= 1");
  need(accumulate >= 1, "accumulate must be >= 1");
  need(learning_rate > 0.0 && std::isfinite(learning_rate), "learning_rate must be positive");
  need(lr_schedule == "constant" || lr_schedule == "cosine",
       "lr_schedule must be 'constant' or 'cosine', not '" + lr_schedule + "'");
  need(weight_decay >= 0.0, "weight_decay must be >= 0");
  need(grad_clip_value > 0.0, "grad_clip_value must be positive");
  need(validation_every >= 0, "validation_every must be >= 0");
  need(validation_tasks >= 0, "validation_tasks must be >= 0");
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
