#pragma once

#include "npe/models/model.h"
#include "npe/models/model_spec.h"
#include "npe/models/modules.h"

namespace npe {

/// Conditional neural process (Garnelo et al. 2018): r = mean_c MLP(x_c, y_c) with five hidden
/// layers of width D_z; the decoder head maps [r, x_t] to a Gaussian. Not translation
/// equivariant (x enters directly). With Nc = 0, r = 0.
class CnpImpl final : public NeuralProcessImpl {
 public:
  explicit CnpImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  Mlp m_encoder{nullptr};
  GaussianHead m_head{nullptr};
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The cnp kind's options.
using CnpOptions = OptionsOf<TokenOptions>;
ModelSpec cnp_spec();

}  // namespace npe
