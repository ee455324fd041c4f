#pragma once

#include "npe/models/model.h"
#include "npe/models/model_spec.h"
#include "npe/models/modules.h"

namespace npe {

/// Simple relational CNP (paper F.1): e(x, D_c) = mean_c phi(x - x_c, y_c), phi an MLP with
/// five hidden layers; the Gaussian head decodes e alone. Inputs enter only as differences,
/// so the model is translation equivariant. With Nc = 0, e = 0.
class RcnpImpl final : public NeuralProcessImpl {
 public:
  explicit RcnpImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  /// mean_c phi(x_t - x_c, y_c) with the context half of phi's first layer precomputed.
  torch::Tensor encode(const torch::Tensor& xt, const torch::Tensor& context_part);

  // phi's first layer, split: W [x_t - x_c; y_c] = W_x x_t - W_x x_c + W_y y_c, so the
  // pairwise tensor is formed by broadcasting instead of concatenating differences.
  torch::nn::Linear m_first_x{nullptr}, m_first_y{nullptr};
  Mlp m_phi_rest{nullptr};
  GaussianHead m_head{nullptr};
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The rcnp kind's options.
using RcnpOptions = OptionsOf<TokenOptions>;
ModelSpec rcnp_spec();

}  // namespace npe
