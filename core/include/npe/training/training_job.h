#pragma once
// A training run as a resumable job: model, AdamW state, step, validation history and wall time,
// written atomically to a checkpoint every N steps so that a killed run loses at most the steps
// since the last one, and resumed from it to the same weights an uninterrupted run reaches. The
// position in the task stream is the step itself: the tasks of step s come from seeds derived
// from (options.seed, s, shard) (training_batch_seed), and training draws nothing else at random.

#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/data/task_source.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model.h"
#include "npe/training/distributed.h"
#include "npe/training/training.h"

namespace torch::optim {
class AdamW;
}

namespace npe {

/// Metrics measured at one validation point.
struct TrainingRecord {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  int64_t step = 0;
  /// Training time so far (pauses excluded), summed over resumptions.
  double wall_time_s = 0.0;
  /// Smoothed training loss (exponential moving average of the negative log-likelihood).
  double loss = kNaN;
  /// Log-likelihood on the fixed validation tasks, and its standard error over batches: the
  /// joint one (the training objective), which for diagonal models is the marginal one.
  double validation_ll = kNaN;
  double validation_ll_stderr = kNaN;
  /// The same validation tasks translated by TaskSource::out_of_range_translation().
  double shifted_ll = kNaN;
  double shifted_ll_stderr = kNaN;
  /// equivariance_error() on a fixed validation batch at the same translation.
  double equivariance_error = kNaN;

  nlohmann::json to_json() const;
  static TrainingRecord from_json(const nlohmann::json& json);
};

/// What to train: everything a job needs to start, and what its checkpoints record.
struct TrainingSpec {
  ModelConfig model;
  /// TaskSource::to_json() of the task.
  nlohmann::json task;
  /// Size preset the model config came from ("small", "paper") or "custom".
  std::string size;
  TrainOptions options;
  /// Command line that started the job (recorded in checkpoints).
  std::string command;
};

/// Reported after every step.
struct TrainingStatus {
  int64_t step = 0;
  int64_t total_steps = 0;
  /// Loss of this step, and its moving average.
  double loss = TrainingRecord::kNaN;
  double smoothed_loss = TrainingRecord::kNaN;
  double wall_time_s = 0.0;
  /// Over the last few seconds of training.
  double steps_per_s = 0.0;
  /// Estimated seconds to the last step.
  double eta_s = TrainingRecord::kNaN;
  /// Set when this step ended with a validation.
  const TrainingRecord* validation = nullptr;
  /// Set when this step ended with a checkpoint written there.
  const std::filesystem::path* checkpoint = nullptr;
};

/// Called after every step (time spent in it, e.g. while paused, is not training time).
/// Returning false stops the job after a final checkpoint.
using TrainingCallback = std::function<bool(const TrainingStatus&)>;

class TrainingJob {
 public:
  /// A new job. Builds the model (weights seeded by options.seed) and the task source from the
  /// spec unless given. Throws ConfigError for invalid options or model settings.
  explicit TrainingJob(TrainingSpec spec, std::shared_ptr<NeuralProcessImpl> model = nullptr,
                       std::shared_ptr<const TaskSource> source = nullptr);
  ~TrainingJob();
  TrainingJob(const TrainingJob&) = delete;
  TrainingJob& operator=(const TrainingJob&) = delete;

  /// Continues a job from a checkpoint it wrote, on `device`. Throws CheckpointError naming the
  /// file when it is unreadable, corrupt, or holds weights only (no training state).
  /// `command` is recorded in the metadata as a new training session (with the device, the
  /// date and the steps it trains).
  static std::unique_ptr<TrainingJob> resume(const std::filesystem::path& checkpoint,
                                             torch::Device device = torch::kCPU,
                                             const std::string& command = {});

  /// Writes a resumable checkpoint to `path` every `every` steps (0: only when the job ends).
  /// Removes temporary files a killed earlier save of `path` left.
  void set_checkpoint(const std::filesystem::path& path, int64_t every);
  /// Trains data-parallel in this group: rank 0's weights are broadcast when run() starts,
  /// gradients are averaged every step, each rank draws its own tasks, and only rank 0
  /// validates and writes checkpoints.
  void set_process_group(std::shared_ptr<DataParallelGroup> group);
  /// Changes the planned number of steps (to extend a resumed job). Throws ConfigError when it
  /// is below the steps already done.
  void set_total_steps(int64_t steps);
  /// Turns keeping the best model on for the rest of the run (it changes no step of training,
  /// so a resumed job may take it up; earlier validations count towards "best so far").
  void keep_best() { m_spec.options.keep_best = true; }

  /// Trains to the planned number of steps or until the callback returns false. Throws
  /// InvalidInputError when the loss becomes non-finite, CheckpointError when a checkpoint
  /// cannot be written.
  TrainResult run(const TrainingCallback& callback = {});
  /// Writes a resumable checkpoint of the current state; `best_of_run` marks it as the model of
  /// the run's best validation (CheckpointMetadata::best_of_run). Throws CheckpointError.
  void save(const std::filesystem::path& path, bool best_of_run = false);
  /// Measures the validation metrics now and appends them to the history.
  const TrainingRecord& validate();

  int64_t step() const { return m_step; }
  int64_t total_steps() const { return m_spec.options.steps; }
  const TrainingSpec& spec() const { return m_spec; }
  const std::vector<TrainingRecord>& history() const { return m_history; }
  double wall_time_s() const { return m_wall_time_s; }
  NeuralProcessImpl& model() { return *m_model; }
  /// The optimiser, with its per-parameter state (what a checkpoint carries besides weights).
  const torch::optim::AdamW& optimizer() const { return *m_optimizer; }
  const TaskSource& source() const { return *m_source; }

 private:
  double train_step();
  void average_gradients();
  CheckpointMetadata metadata() const;
  bool is_leader() const;

  TrainingSpec m_spec;
  std::shared_ptr<NeuralProcessImpl> m_model;
  std::shared_ptr<const TaskSource> m_source;
  std::unique_ptr<torch::optim::AdamW> m_optimizer;
  std::shared_ptr<DataParallelGroup> m_group;
  std::filesystem::path m_checkpoint_path;
  int64_t m_checkpoint_every = 0;
  int64_t m_step = 0;
  double m_wall_time_s = 0.0;
  double m_smoothed_loss = TrainingRecord::kNaN;
  std::vector<TrainingRecord> m_history;
  /// Every run of this job, the current one last (its steps and wall time follow the job's).
  std::vector<TrainingSession> m_sessions;
  double m_session_start_wall_time_s = 0.0;
};

/// Trains `model` (moved to options.device) on tasks from `source`, without checkpoints (a
/// TrainingJob, training_job.h, is the resumable form). Validation uses a fixed set
/// of tasks that does not depend on options.seed. Throws InvalidInputError when the loss
/// becomes non-finite (with the step), ConfigError for bad options.
TrainResult train_model(NeuralProcessImpl& model, const TaskSource& source,
                        const TrainOptions& options, const TrainingCallback& progress = {});

}  // namespace npe
