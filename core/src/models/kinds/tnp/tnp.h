#pragma once

#include <memory>

#include "models/tnp_encoders.h"
#include "npe/models/model.h"
#include "npe/models/model_spec.h"
#include "npe/models/modules.h"

namespace npe {

/// Transformer neural process (paper F.1). Context tokens MLP([x, y, 1]), target tokens the
/// same MLP on [x, 0, 0]; per layer self-attention among context tokens and cross-attention
/// from targets to context (targets never attend to each other); Gaussian head on the target
/// tokens. Not translation equivariant.
class TnpImpl final : public NeuralProcessImpl {
 public:
  explicit TnpImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  Mlp m_embed{nullptr};
  std::vector<AttentionBlock> m_self, m_cross;
  GaussianHead m_head{nullptr};
};

/// Translation-equivariant TNP (paper Section 3). Tokens depend on outputs only: context
/// MLP([y, 0]), targets MLP([0, 1]); every attention is TE attention, with location updates
/// (eq. 10) when update_locations. With share_layer_weights each layer's context
/// self-attention and target cross-attention use one set of weights, as the authors' code does.
class TeTnpImpl final : public NeuralProcessImpl {
 public:
  explicit TeTnpImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  std::unique_ptr<TeTnpEncoder> m_encoder;
  GaussianHead m_head{nullptr};
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The tnp kind's options.
using TnpOptions = OptionsOf<TransformerOptions>;
ModelSpec tnp_spec();
/// The tetnp kind's options.
using TeTnpOptions = OptionsOf<TransformerOptions, TeAttentionOptions, LayerSharingOptions>;
ModelSpec tetnp_spec();

}  // namespace npe
