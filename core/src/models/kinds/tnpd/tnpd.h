#pragma once

#include <memory>

#include "models/tnp_encoders.h"
#include "npe/models/model.h"
#include "npe/models/model_spec.h"

namespace npe {

/// TNP-D as in Nguyen & Grover (Section 3.2, eq. 8): one stack of attention layers over context
/// and target tokens under their mask (each layer's weights serve the context and the targets
/// alike), targets conditionally independent given the context, diagonal Gaussian head. Unlike
/// the "tnp" kind (the TE-TNP paper's TNP, with separate self- and cross-attention per layer).
class TnpdImpl final : public NeuralProcessImpl {
 public:
  explicit TnpdImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  std::unique_ptr<TnpdEncoder> m_encoder;
  GaussianHead m_head{nullptr};
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The tnpd kind's options.
using TnpdOptions = OptionsOf<TransformerOptions>;
ModelSpec tnpd_spec();

}  // namespace npe
