#pragma once
// Interface of anything that produces batches of tasks for training and evaluation.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npe/ground/joint_gaussian.h"
#include "npe/ground/prediction.h"
#include "npe/ground/task.h"

namespace npe {

/// The most tasks in one batch (training, evaluation, benchmarks): far above any training recipe
/// (16 to 64), far below what exhausts memory before the first step (1e8 gp1d tasks grew past
/// 5 GB in sampling and never reached the step, where a stop signal is answered).
constexpr int64_t kMaxBatchSize = 65536;

/// The best predictor possible for tasks whose generating process is known (for GP tasks, the
/// exact posterior under the generating kernel). Carried by the tasks it knows about.
class TaskOracle {
 public:
  virtual ~TaskOracle() = default;
  /// Predicts `task`, which must be the batch this oracle came with (possibly translated or
  /// with other targets). Throws InvalidInputError when the batch does not match.
  virtual Prediction predict(const Task& task) const = 0;
  /// The joint predictive over all targets of each task, where the oracle knows it.
  virtual std::optional<JointGaussian> predict_joint(const Task& task) const {
    (void)task;
    return std::nullopt;
  }
  /// What kind of task each one of the batch is, where the generating process has kinds (GP
  /// tasks: the kernel family, "se", "periodic", "matern52"), so that an evaluation can say
  /// where a model's loss lies. Empty where tasks have no kinds.
  virtual std::vector<std::string> task_kinds() const { return {}; }
  /// Each task's characteristic input scale, where the generating process has one (GP tasks:
  /// the scale ell drawn for the task, i.e. the lengthscale, or the period of a periodic
  /// kernel), so that an evaluation can say at which scales a model's loss lies. Empty where
  /// tasks have none.
  virtual std::vector<double> task_scales() const { return {}; }
};

/// A batch of tasks plus, when the generating process is known, its oracle.
struct TaskBatch {
  Task task;
  std::shared_ptr<const TaskOracle> oracle;
  bool has_oracle() const { return static_cast<bool>(oracle); }
};

/// Which part of the data tasks come from. Synthetic sources only use it to pick seeds;
/// dataset-backed sources (images) draw from disjoint sets of examples.
enum class Split { Train, Validation, Test };

/// Deterministic task source: sample(batch, seed, tau, split) always returns the same tasks for
/// the same arguments, and tasks at translation tau are the tasks at tau = 0 translated by tau.
class TaskSource {
 public:
  virtual ~TaskSource() = default;
  /// Registry name as on the command line ("gp1d", "tfmnist").
  virtual std::string name() const = 0;
  virtual int64_t dim_x() const = 0;
  virtual int64_t dim_y() const = 0;
  /// Draws batch_size tasks on the CPU in float32. Throws ConfigError for batch_size < 1,
  /// InvalidInputError for a bad translation, DataError when backing data cannot be read.
  virtual TaskBatch sample(int64_t batch_size, uint64_t seed, const Translation& tau = {},
                           Split split = Split::Train) const = 0;
  /// Configuration, stored in checkpoints; task_source_from_json() rebuilds the source.
  virtual nlohmann::json to_json() const = 0;
  /// A translation outside the training range, used to show what non-equivariant models do.
  virtual Translation out_of_range_translation() const = 0;
  /// Sum over outputs of the log of the scale that standardised them (the series family
  /// divides each y by its training standard deviation): a log-likelihood per target in the
  /// data's units is the standardised one minus this. 0 where outputs are the data's own.
  virtual double output_log_scale() const { return 0.0; }
  /// What the source read from the user's data and how it splits it, in words (the series and
  /// pictures families); empty where the data are the program's own.
  virtual std::string describe() const { return {}; }

  /// A named change of configuration under which results are reported separately (ERA5: the
  /// test split drawn from the training region or from the unseen region).
  struct Variant {
    std::string label;
    nlohmann::json overrides;
    /// Variants of one group (ERA5: one region's test blocks) are also summarised together,
    /// with standard errors over the group's variants; empty: no summary.
    std::string group;
  };
  virtual std::vector<Variant> evaluation_variants() const { return {}; }
};

}  // namespace npe
