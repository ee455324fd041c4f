#pragma once
// Common interface of the neural-process models.

#include <optional>
#include <string>

#include <torch/nn/module.h>

#include "npe/ground/joint_gaussian.h"
#include "npe/ground/prediction.h"
#include "npe/ground/task.h"
#include "npe/models/model_config.h"

namespace npe {

/// A neural process: maps a batch of tasks to a Gaussian predictive at every target.
/// Implementations must accept Nc = 0 and be invariant to the order of context points.
class NeuralProcessImpl : public torch::nn::Module {
 public:
  explicit NeuralProcessImpl(ModelConfig config) : m_config(std::move(config)) {}

  /// xc [B,Nc,Dx], yc [B,Nc,Dy], xt [B,Nt,Dx] -> mean, stddev [B,Nt,Dy] in the model's dtype.
  /// The task may be float32 or float64 (see model_inputs). Throws InvalidInputError for wrong
  /// shapes or non-finite inputs.
  Prediction predict(const Task& task);

  const ModelConfig& config() const { return m_config; }

  /// Log-likelihood of task.yt per task, divided by N_t: [B], differentiable; the training
  /// objective. Joint for models with a joint predictive (ModelInfo::joint), else the sum of
  /// the marginal log-likelihoods. Throws InvalidInputError without target outputs.
  torch::Tensor log_likelihood(const Task& task);

  /// `count` coherent samples [count,B,Nt,Dy] of the outputs at the targets, drawn with
  /// `generator` (a CPU generator). Throws ConfigError for models without a joint predictive.
  torch::Tensor sample(const Task& task, int64_t count, torch::Generator generator);

  /// The joint Gaussian predictive for models that have one in closed form (TNP-ND kinds);
  /// nullopt otherwise.
  std::optional<JointGaussian> joint_predictive(const Task& task);

  /// For models whose targets attend to the context (TNP, TE-TNP): runs the model and returns
  /// the last cross-attention layer's weights from each target to each context point, summed
  /// over heads: [B,Nt,Nc]. Undefined tensor for models without such attention.
  torch::Tensor target_attention(const Task& task);

 protected:
  /// Model-specific forward pass on a validated task.
  virtual Prediction forward_impl(const Task& task) = 0;
  /// The joint predictive on a validated task, for models with one in closed form.
  virtual std::optional<JointGaussian> joint_impl(const Task& task) {
    (void)task;
    return std::nullopt;
  }
  /// Joint log-likelihood on a validated task with outputs; by default from joint_impl, else
  /// from the marginals.
  virtual torch::Tensor log_likelihood_impl(const Task& task);
  /// Samples on a validated task; by default from joint_impl.
  virtual torch::Tensor sample_impl(const Task& task, int64_t count, torch::Generator& generator);

  /// The task as forward_impl sees it: for translation-equivariant models inputs are measured
  /// from a whole-numbered reference point of the data (computed in float64), then scaled by
  /// config.input_scale and converted to the parameters' dtype.
  Task model_inputs(const Task& task) const;
  torch::ScalarType parameter_dtype() const;

  /// Set while target_attention() runs; models with attention store the last cross-attention
  /// weights [B,H,Nt,Nc] in m_last_attention when it is true.
  bool m_record_attention = false;
  torch::Tensor m_last_attention;

 private:
  ModelConfig m_config;
};

}  // namespace npe
