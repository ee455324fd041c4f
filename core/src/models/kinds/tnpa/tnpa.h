#pragma once

#include <vector>

#include "npe/models/model.h"
#include "npe/models/model_spec.h"
#include "npe/models/modules.h"

namespace npe {

/// TNP-A, Nguyen & Grover's autoregressive TNP (Section 3.1). The sequence holds the context
/// tokens, the target tokens (x, y) and padded target tokens (x, 0) (their eq. 6) under their
/// mask (Figure 2): context -> context; target i -> context and targets j <= i; padded target i
/// -> context and targets j < i. The padded tokens' Gaussian head gives p(y_i | context,
/// y_<i), so one pass scores the given targets in their order (teacher forcing), and sampling
/// draws the targets one at a time. Evaluation averages num_permutations random orders
/// (their eq. 7); marginals are the one-step predictive p(y_i | context) of each target.
class TnpaImpl final : public NeuralProcessImpl {
 public:
  explicit TnpaImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;
  torch::Tensor log_likelihood_impl(const Task& task) override;
  torch::Tensor sample_impl(const Task& task, int64_t count, torch::Generator& generator) override;

 private:
  /// Sum over targets of log p(y_i | context, y_<i) in the task's target order: [B].
  torch::Tensor ordered_log_likelihood(const Task& task);

  Mlp m_embed{nullptr};
  std::vector<AttentionBlock> m_layers;
  GaussianHead m_head{nullptr};
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The tnpa kind's options.
using TnpaOptions = OptionsOf<TransformerOptions, PermutationOptions>;
ModelSpec tnpa_spec();

}  // namespace npe
