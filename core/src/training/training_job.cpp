#include "npe/training/training_job.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "npe/atomic_file.h"
#include "npe/crash_report.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/models/compute_settings.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/equivariance.h"
#include "npe/predictors/predictor_registry.h"
#include "npe/runtime.h"
#include "npe/seeds.h"
#include "npe/training/evaluation.h"
#include "npe/training/optimizer_state.h"

namespace npe {
namespace {

// The current time, UTC, ISO 8601 (as checkpoints record it).
std::string utc_now() {
  const auto now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

constexpr const char* kTrainingStateKey = "npe_training_state";
// libtorch's own optimiser archive: what checkpoints before write_adamw_state held.
constexpr const char* kLegacyOptimizerKey = "npe_optimizer";
constexpr int kTrainingStateVersion = 1;
// Validation batches are always this size, so validation figures do not depend on the training
// batch size and runs with different batch sizes are compared on the same tasks.
constexpr int64_t kValidationBatch = 16;
// Index of the validation batch the equivariance error is measured on (beyond the indices the
// validation evaluation uses).
constexpr uint64_t kEquivarianceBatchIndex = uint64_t{1} << 40;
// The smoothed loss is a running mean over the first steps, then an exponential moving average
// over about this many steps.
constexpr double kLossSmoothingSteps = 50.0;

double number_or_nan(const nlohmann::json& json, const char* key) {
  auto found = json.find(key);
  return found != json.end() && found->is_number() ? found->get<double>() : TrainingRecord::kNaN;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

nlohmann::json TrainingRecord::to_json() const {
  return {{"step", step},
          {"wall_time_s", wall_time_s},
          {"loss", json_number_or_null(loss)},
          {"val_ll", json_number_or_null(validation_ll)},
          {"val_ll_stderr", json_number_or_null(validation_ll_stderr)},
          {"shifted_ll", json_number_or_null(shifted_ll)},
          {"shifted_ll_stderr", json_number_or_null(shifted_ll_stderr)},
          {"equivariance_error", json_number_or_null(equivariance_error)}};
}

TrainingRecord TrainingRecord::from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("step") || !json.at("step").is_number_integer()) {
    throw CheckpointError("a training-history record has no step");
  }
  TrainingRecord r;
  r.step = json.at("step").get<int64_t>();
  r.wall_time_s = number_or_nan(json, "wall_time_s");
  r.loss = number_or_nan(json, "loss");
  r.validation_ll = number_or_nan(json, "val_ll");
  r.validation_ll_stderr = number_or_nan(json, "val_ll_stderr");
  r.shifted_ll = number_or_nan(json, "shifted_ll");
  r.shifted_ll_stderr = number_or_nan(json, "shifted_ll_stderr");
  r.equivariance_error = number_or_nan(json, "equivariance_error");
  return r;
}

TrainingJob::TrainingJob(TrainingSpec spec, std::shared_ptr<NeuralProcessImpl> model,
                         std::shared_ptr<const TaskSource> source)
    : m_spec(std::move(spec)), m_model(std::move(model)), m_source(std::move(source)) {
  // New settings were checked against their ranges where they were given (npe train, the
  // Training tab); a resumed job keeps what its checkpoint recorded.
  m_spec.options.check_trainable();
  if (!m_source) m_source = task_source_from_json(m_spec.task);
  if (m_spec.task.is_null()) m_spec.task = m_source->to_json();
  // Options set one by one (or a checkpoint from before sizes were matched) may still make up
  // a named size, e.g. the paper's transformer on the small size is "medium".
  if (m_spec.size.empty() || m_spec.size == "custom") {
    m_spec.size = matching_model_size(m_spec.model, *m_source);
  }
  if (!m_model) {
    // The weights' initialisation is the one place training draws from torch's global
    // generator; seeding it here makes a job's result a function of its spec.
    torch::manual_seed(m_spec.options.seed);
    m_model = make_model(m_spec.model);
  }
  m_model->to(m_spec.options.device);
  // A validation split without tasks (the user's data with validation_fraction=0, or too few
  // pictures for it) is said now, not at the first validation, after minutes of training.
  if (m_spec.options.validation_tasks > 0) m_source->sample(1, 0, {}, Split::Validation);
  m_sessions.push_back({m_spec.command, describe_device(m_spec.options.device), utc_now(), 0, 0,
                        0.0, precision_name(pairwise_precision())});
  m_optimizer = std::make_unique<torch::optim::AdamW>(
      m_model->parameters(), torch::optim::AdamWOptions(m_spec.options.learning_rate)
                                 .weight_decay(m_spec.options.weight_decay));
}

TrainingJob::~TrainingJob() = default;

std::unique_ptr<TrainingJob> TrainingJob::resume(const std::filesystem::path& checkpoint,
                                                 torch::Device device, const std::string& command) {
  auto loaded = load_checkpoint(checkpoint, device);
  auto archive = open_checkpoint_archive(checkpoint, device);
  const auto where = "checkpoint '" + checkpoint.string() + "'";
  c10::IValue state_record;
  if (!archive.try_read(kTrainingStateKey, state_record) || !state_record.isString()) {
    throw CheckpointError(where +
                          " holds weights only (no training state): it can be opened and "
                          "evaluated but not resumed; train a new model instead");
  }
  nlohmann::json state;
  try {
    state = nlohmann::json::parse(state_record.toStringRef());
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(where + " has a corrupt training state: " + e.what());
  }
  TrainingSpec spec;
  spec.model = loaded.metadata.model;
  spec.task = loaded.metadata.task;
  spec.size = loaded.metadata.size;
  spec.command = loaded.metadata.command;
  std::unique_ptr<TrainingJob> job;
  try {
    if (state.value("version", 0) != kTrainingStateVersion) {
      throw CheckpointError("unsupported training-state version " +
                            state.value("version", nlohmann::json()).dump());
    }
    spec.options = TrainOptions::from_json(state.at("options"));
    spec.options.device = device;
    job = std::make_unique<TrainingJob>(std::move(spec), loaded.model);
    job->m_step = state.at("step").get<int64_t>();
    job->m_wall_time_s = state.at("wall_time_s").get<double>();
    job->m_smoothed_loss = number_or_nan(state, "smoothed_loss");
    for (const auto& record : state.at("history")) {
      job->m_history.push_back(TrainingRecord::from_json(record));
    }
    // The sessions so far; a checkpoint from before they were recorded has one, its first, whose
    // start is then unknown: its started_at is when that checkpoint was written.
    job->m_sessions = loaded.metadata.sessions;
    if (job->m_sessions.empty()) {
      job->m_sessions.push_back({loaded.metadata.command, loaded.metadata.device,
                                 loaded.metadata.created_at, 0, job->m_step, job->m_wall_time_s,
                                 /*precision=*/""});
    }
    job->m_sessions.push_back({command.empty() ? "(resumed)" : command, describe_device(device),
                               utc_now(), job->m_step, job->m_step, 0.0,
                               precision_name(pairwise_precision())});
    job->m_session_start_wall_time_s = job->m_wall_time_s;
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(where + " has a malformed training state: " + e.what());
  } catch (const CheckpointError& e) {
    throw CheckpointError(where + ": " + e.what());
  } catch (const ConfigError& e) {
    throw CheckpointError(where + " has invalid training options: " + e.what());
  }
  if (job->m_step != loaded.metadata.steps) {
    throw CheckpointError(where + " is inconsistent: its weights are from step " +
                          std::to_string(loaded.metadata.steps) +
                          ", its training state from step " + std::to_string(job->m_step));
  }
  try {
    if (!read_adamw_state(archive, *job->m_optimizer, *job->m_model, where)) {
      torch::serialize::InputArchive optimizer_archive;
      if (!archive.try_read(kLegacyOptimizerKey, optimizer_archive)) {
        throw CheckpointError(where + " lacks the optimiser state needed to resume");
      }
      job->m_optimizer->load(optimizer_archive);
      check_adamw_state(*job->m_optimizer, *job->m_model, where);
    }
  } catch (const c10::Error& e) {
    throw CheckpointError(where + " has a corrupt optimiser state: " +
                          std::string(e.what_without_backtrace()).substr(0, 200));
  }
  return job;
}

void TrainingJob::set_checkpoint(const std::filesystem::path& path, int64_t every) {
  if (every < 0) throw ConfigError("checkpoint interval must be >= 0");
  m_checkpoint_path = path;
  m_checkpoint_every = every;
  if (!path.empty() && is_leader()) remove_stale_temporaries(path);
}

void TrainingJob::set_process_group(std::shared_ptr<DataParallelGroup> group) {
  m_group = std::move(group);
  if (!m_checkpoint_path.empty() && is_leader()) remove_stale_temporaries(m_checkpoint_path);
}

void TrainingJob::set_total_steps(int64_t steps) {
  if (steps < m_step) {
    throw ConfigError("the job is already at step " + std::to_string(m_step) +
                      "; it cannot be set to end at step " + std::to_string(steps));
  }
  m_spec.options.steps = steps;
}

bool TrainingJob::is_leader() const {
  return !m_group || m_group->rank() == 0;
}

double TrainingJob::train_step() {
  const auto& options = m_spec.options;
  m_model->train();
  if (options.lr_schedule == "cosine") {
    const double progress = double(m_step - 1) / double(options.steps);
    for (auto& group : m_optimizer->param_groups()) {
      group.options().set_lr(options.learning_rate * 0.5 * (1.0 + std::cos(M_PI * progress)));
    }
  }
  m_optimizer->zero_grad();
  const int64_t rank = m_group ? m_group->rank() : 0;
  double loss_sum = 0.0;
  for (int64_t micro = 0; micro < options.accumulate; ++micro) {
    const int64_t shard = rank * options.accumulate + micro;
    auto batch = m_source->sample(
        options.batch_size, training_batch_seed(options.seed, m_step, shard), {}, Split::Train);
    auto task = batch.task.to(options.device);
    // The joint log-likelihood: for diagonal models the sum of the marginal ones.
    auto loss = -m_model->log_likelihood(task).mean();
    const double value = loss.item<double>();
    loss_sum += value;
    if (!std::isfinite(value)) break;  // every rank learns of it below
    // The mean over micro-batches, like one batch of all their tasks.
    (options.accumulate > 1 ? loss / double(options.accumulate) : loss).backward();
  }
  double loss = loss_sum / double(options.accumulate);
  if (m_group && m_group->world_size() > 1) {
    auto total = torch::tensor({loss}, torch::kFloat64);
    m_group->all_reduce_sum(total);
    loss = total.item<double>() / m_group->world_size();
  }
  if (!std::isfinite(loss)) {
    throw InvalidInputError("training diverged: the loss became non-finite at step " +
                            std::to_string(m_step));
  }
  average_gradients();
  for (auto& p : m_model->parameters()) {
    if (p.grad().defined()) p.grad().clamp_(-options.grad_clip_value, options.grad_clip_value);
  }
  m_optimizer->step();
  return loss;
}

void TrainingJob::average_gradients() {
  if (!m_group || m_group->world_size() <= 1) return;
  // One flat all-reduce: a collective per parameter tensor costs a round trip each.
  std::vector<torch::Tensor> grads;
  for (auto& p : m_model->parameters()) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad().reshape(-1));
  }
  auto flat = torch::cat(grads);
  m_group->all_reduce_sum(flat);
  flat.div_(double(m_group->world_size()));
  int64_t offset = 0;
  for (auto& p : m_model->parameters()) {
    const auto n = p.numel();
    p.mutable_grad().copy_(flat.slice(0, offset, offset + n).view_as(p));
    offset += n;
  }
}

const TrainingRecord& TrainingJob::validate() {
  const auto& options = m_spec.options;
  TrainingRecord record;
  record.step = m_step;
  record.wall_time_s = m_wall_time_s;
  record.loss = m_smoothed_loss;
  if (options.validation_tasks > 0) {
    m_model->eval();
    torch::NoGradGuard no_grad;
    // A non-owning handle: the predictor lives only for this validation.
    auto predictor =
        wrap_model(std::shared_ptr<NeuralProcessImpl>(m_model.get(), [](auto*) {}), options.device);
    EvalOptions eval;
    eval.num_tasks = options.validation_tasks;
    eval.batch_size = kValidationBatch;
    eval.seed = 0;
    eval.stream = kValidationStream;
    eval.split = Split::Validation;
    const auto tau = m_source->out_of_range_translation();
    // An untrained or diverging model may predict non-finite values: that is a figure of the
    // run (NaN), not a reason to end it.
    try {
      const auto result = evaluate(*predictor, *m_source, eval);
      record.validation_ll = result.ll_joint_mean;
      record.validation_ll_stderr = result.ll_joint_stderr;
    } catch (const InvalidInputError&) {
    }
    try {
      eval.shift = tau;
      const auto result = evaluate(*predictor, *m_source, eval);
      record.shifted_ll = result.ll_joint_mean;
      record.shifted_ll_stderr = result.ll_joint_stderr;
    } catch (const InvalidInputError&) {
    }
    try {
      const auto batch = m_source->sample(
          std::min(kValidationBatch, options.validation_tasks),
          derive_seed(0, kValidationStream, kEquivarianceBatchIndex), {}, Split::Validation);
      record.equivariance_error = equivariance_error(*predictor, batch, tau);
    } catch (const InvalidInputError&) {
    }
  }
  m_history.push_back(record);
  return m_history.back();
}

CheckpointMetadata TrainingJob::metadata() const {
  CheckpointMetadata m;
  m.model = m_spec.model;
  m.task = m_spec.task;
  m.steps = m_step;
  m.planned_steps = m_spec.options.steps;
  m.wall_time_s = m_wall_time_s;
  m.device = describe_device(m_spec.options.device);
  if (m_group && m_group->world_size() > 1) {
    m.device +=
        " x " + std::to_string(m_group->world_size()) + " processes (" + m_group->backend() + ")";
  }
  for (auto it = m_history.rbegin(); it != m_history.rend(); ++it) {
    if (std::isfinite(it->validation_ll)) {
      m.validation_ll = it->validation_ll;
      break;
    }
  }
  m.seed = m_spec.options.seed;
  m.size = m_spec.size;
  m.command = m_spec.command;
  m.created_at = utc_now();
  m.sessions = m_sessions;
  if (!m.sessions.empty()) {
    auto& current = m.sessions.back();
    current.to_step = m_step;
    current.wall_time_s = m_wall_time_s - m_session_start_wall_time_s;
    current.device = m.device;
  }
  m.libtorch_version = libtorch_version();
  return m;
}

void TrainingJob::save(const std::filesystem::path& path, bool best_of_run) {
  nlohmann::json state = {{"version", kTrainingStateVersion},
                          {"options", m_spec.options.to_json()},
                          {"step", m_step},
                          {"wall_time_s", m_wall_time_s},
                          {"smoothed_loss", json_number_or_null(m_smoothed_loss)},
                          {"world_size", m_group ? m_group->world_size() : 1},
                          {"history", nlohmann::json::array()}};
  for (const auto& record : m_history) state["history"].push_back(record.to_json());
  auto meta = metadata();
  meta.best_of_run = best_of_run;
  save_checkpoint(path, *m_model, meta, [&](torch::serialize::OutputArchive& archive) {
    archive.write(kTrainingStateKey, c10::IValue(state.dump()));
    write_adamw_state(archive, *m_optimizer, *m_model);
  });
}

TrainResult TrainingJob::run(const TrainingCallback& callback) {
  const auto& options = m_spec.options;
  if (m_group && m_group->world_size() > 1) {
    // Every rank starts from rank 0's weights (and, after a resume, they are equal anyway).
    std::vector<torch::Tensor> state;
    for (auto& p : m_model->parameters()) state.push_back(p.data());
    for (auto& b : m_model->buffers()) state.push_back(b);
    torch::NoGradGuard no_grad;
    m_group->broadcast(state);
  }
  TrainResult result;
  double last_loss = TrainingRecord::kNaN;
  int64_t last_saved = -1;
  // Steps per second over a window of recent training time.
  auto window_start = Clock::now();
  double window_training_s = 0.0;
  int64_t window_steps = 0;
  double steps_per_s = 0.0;
  bool stop = false;
  while (m_step < options.steps && !stop) {
    const auto step_start = Clock::now();
    const double wall_time_before = m_wall_time_s;
    ++m_step;
    set_crash_phase("training (a step)");
    last_loss = train_step();
    const double alpha = std::max(1.0 / double(m_step), 1.0 / kLossSmoothingSteps);
    m_smoothed_loss = std::isfinite(m_smoothed_loss)
                          ? (1.0 - alpha) * m_smoothed_loss + alpha * last_loss
                          : last_loss;
    const bool last = m_step == options.steps;
    const TrainingRecord* validation = nullptr;
    if (is_leader() &&
        (last || (options.validation_every > 0 && m_step % options.validation_every == 0))) {
      m_wall_time_s = wall_time_before + seconds_since(step_start);
      double best_before = -std::numeric_limits<double>::infinity();
      for (const auto& record : m_history) {
        if (std::isfinite(record.validation_ll))
          best_before = std::max(best_before, record.validation_ll);
      }
      set_crash_phase("validating");
      validation = &validate();
      if (options.keep_best && !m_checkpoint_path.empty() &&
          std::isfinite(validation->validation_ll) && validation->validation_ll > best_before) {
        set_crash_phase("writing the best checkpoint");
        save(best_checkpoint_path(m_checkpoint_path), /*best_of_run=*/true);
      }
    }
    const std::filesystem::path* checkpoint = nullptr;
    const bool checkpoint_due =
        last || (m_checkpoint_every > 0 && m_step % m_checkpoint_every == 0);
    m_wall_time_s = wall_time_before + seconds_since(step_start);
    if (is_leader() && !m_checkpoint_path.empty() && checkpoint_due) {
      set_crash_phase("writing a checkpoint");
      save(m_checkpoint_path);
      last_saved = m_step;
      checkpoint = &m_checkpoint_path;
    }
    const double step_s = seconds_since(step_start);
    m_wall_time_s = wall_time_before + step_s;
    window_training_s += step_s;
    ++window_steps;
    if (window_training_s > 0.0 && (window_steps >= 2 || steps_per_s == 0.0)) {
      steps_per_s = double(window_steps) / window_training_s;
    }
    if (seconds_since(window_start) > 3.0) {
      window_start = Clock::now();
      window_training_s = 0.0;
      window_steps = 0;
    }
    set_crash_phase("reporting progress");
    if (callback) {
      TrainingStatus status;
      status.step = m_step;
      status.total_steps = options.steps;
      status.loss = last_loss;
      status.smoothed_loss = m_smoothed_loss;
      status.wall_time_s = m_wall_time_s;
      status.steps_per_s = steps_per_s;
      if (steps_per_s > 0.0) status.eta_s = double(options.steps - m_step) / steps_per_s;
      status.validation = validation;
      status.checkpoint = checkpoint;
      stop = !callback(status);
    }
    if (m_group && m_group->world_size() > 1) {
      // Every rank stops at the same step when any is asked to.
      auto flag = torch::tensor({stop ? 1.0 : 0.0}, torch::kFloat64);
      m_group->all_reduce_sum(flag);
      stop = flag.item<double>() > 0.0;
    }
  }
  if (stop && !m_checkpoint_path.empty() && is_leader() && last_saved != m_step) {
    set_crash_phase("writing the final checkpoint of a stopped run");
    save(m_checkpoint_path);
  }
  set_crash_phase("finishing the run");
  if (options.steps == 0 && is_leader()) validate();
  m_model->eval();
  result.steps = m_step;
  result.final_loss = last_loss;
  result.wall_time_s = m_wall_time_s;
  result.cancelled = stop;
  for (const auto& record : m_history) {
    if (std::isfinite(record.validation_ll)) {
      result.validation_history.emplace_back(record.step, record.validation_ll);
      result.validation_ll = record.validation_ll;
      result.validation_ll_stderr = record.validation_ll_stderr;
    }
  }
  return result;
}

}  // namespace npe
