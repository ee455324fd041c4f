#pragma once
// One interface for everything that predicts: trained neural processes and GP baselines.

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "npe/data/task_source.h"
#include "npe/ground/joint_gaussian.h"
#include "npe/ground/prediction.h"
#include "npe/models/flops.h"
#include "npe/models/model.h"
#include "npe/predictors/kernel_posterior.h"

namespace npe {

/// What a predictor can do; the tools decide from these, never from names.
struct PredictorCapabilities {
  bool translation_equivariant = false;
  /// target_attention() returns weights.
  bool attention = false;
  /// Inputs are rounded to whole grid cells (exactly equivariant to whole-cell shifts only).
  bool on_grid = false;
  /// A neural model with weights (trained by npe train); otherwise a baseline fitted per task.
  bool trainable = false;
  /// Needs batches that carry an oracle (TaskBatch::oracle).
  bool needs_oracle = false;
  /// Needs to know the prior the tasks were drawn from (GP tasks: PredictorOptions::gp_prior).
  bool needs_gp_prior = false;
  /// forward_flops() can count its work.
  bool flop_model = false;
  /// Has a joint predictive: sample() draws coherent functions and joint_log_likelihood() is
  /// more than the sum of the marginals (GP baselines, TNP-ND, TNP-A kinds).
  bool joint = false;
  /// Named sizes (default_model_config) for trainable predictors.
  std::vector<std::string> size_presets;
  /// Input dimensions for which tools pick this baseline by default where several would do
  /// (gp-fitted's kernel families are 1-D; gp-se-ard is the choice beyond). It predicts for any
  /// dimension it supports when asked by name.
  int64_t default_min_dim_x = 1;
  int64_t default_max_dim_x = std::numeric_limits<int64_t>::max();
  bool default_for_dim_x(int64_t dim_x) const {
    return dim_x >= default_min_dim_x && dim_x <= default_max_dim_x;
  }
};

struct PredictorInfo {
  std::string name;          ///< registry name, as on the command line ("tetnp", "gp-oracle")
  std::string display_name;  ///< e.g. "TE-TNP"
  std::string description;   ///< one sentence
  PredictorCapabilities capabilities;
};

/// Predicts Gaussian marginals at the targets of a batch of tasks.
class Predictor {
 public:
  explicit Predictor(PredictorInfo info) : m_info(std::move(info)) {}
  virtual ~Predictor() = default;
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  const PredictorInfo& info() const { return m_info; }
  /// Mean and stddev [B,Nt,Dy] on the CPU in float32, whatever device the predictor runs on.
  /// Throws InvalidInputError for malformed tasks, ConfigError when the predictor cannot handle
  /// them (e.g. the oracle without a known generating process).
  virtual Prediction predict(const TaskBatch& batch) = 0;
  /// Attention of each target over the context points, [B,Nt,Nc] summed over heads, or an
  /// undefined tensor when the predictor has none.
  virtual torch::Tensor target_attention(const Task& task) {
    (void)task;
    return {};
  }
  /// log p(y_t | context) / N_t per task, [B] float64 on the CPU: the joint log-likelihood for
  /// predictors with a joint predictive, the sum of the marginal ones otherwise. Needs target
  /// outputs (InvalidInputError).
  virtual torch::Tensor joint_log_likelihood(const TaskBatch& batch);
  /// Mean over targets of log p(y_i | context), [B] float64 on the CPU, for predictors whose
  /// per-target predictive is not the Gaussian that predict() returns (a mixture: predict() gives
  /// its moment-matched Gaussian). Undefined for every other predictor, whose marginal
  /// log-likelihood follows from predict().
  virtual torch::Tensor exact_marginal_log_likelihood(const TaskBatch& batch) {
    (void)batch;
    return {};
  }
  /// `count` coherent samples [count,B,Nt,Dy] (float32, CPU) of the outputs at the targets,
  /// reproducible for a seed. Throws ConfigError for predictors without a joint predictive.
  virtual torch::Tensor sample(const TaskBatch& batch, int64_t count, uint64_t seed);
  /// The predictive covariance [B,N,N] (N = Nt * Dy, target-major; float64, CPU) where it is
  /// known in closed form (GP baselines, TNP-ND kinds); undefined otherwise.
  virtual torch::Tensor predictive_covariance(const TaskBatch& batch) {
    (void)batch;
    return {};
  }
  /// What each task's context says about its kernel, one per task of the batch, for predictors
  /// that weigh kernel hypotheses (gp-bayes); empty for every other.
  virtual std::vector<KernelPosterior> kernel_posteriors(const TaskBatch& batch) {
    (void)batch;
    return {};
  }
  /// The neural model behind a trainable predictor (nullptr for baselines).
  virtual std::shared_ptr<NeuralProcessImpl> neural_model() const { return nullptr; }
  /// Estimated work of predict() (FLOPs) for batches of this shape, for planning interactive
  /// work: the model's forward_flops() for neural kinds, the linear algebra (times the fit's
  /// iterations) for GP baselines; NaN where unknown.
  virtual double prediction_flops(const BatchShape& shape) const;
  /// Most context points predict() accepts (0: any number). GP baselines are capped in
  /// interactive tools, since their cost grows as the cube of the context size.
  virtual int64_t max_context() const { return 0; }

 private:
  PredictorInfo m_info;
};

}  // namespace npe
