#pragma once

#include "npe/models/model.h"
#include "npe/models/model_spec.h"
#include "npe/models/modules.h"

namespace npe {

/// Pseudo-token TNP in the induced-set-transformer style (paper Section 2.3). M learned
/// pseudo-tokens; per layer: pseudo-tokens <- cross-attention to context, context <-
/// cross-attention to pseudo-tokens, targets <- cross-attention to pseudo-tokens. Cost
/// O(M (Nc + Nt)). Tokens as in TNP; not translation equivariant.
class PtTnpImpl final : public NeuralProcessImpl {
 public:
  explicit PtTnpImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  Mlp m_embed{nullptr};
  torch::Tensor m_pseudo_tokens;  // [M, Dz]
  std::vector<AttentionBlock> m_pseudo_from_context, m_context_from_pseudo, m_target_from_pseudo;
  GaussianHead m_head{nullptr};
};

/// Translation-equivariant pseudo-token TNP (paper Section 3.1). Pseudo-tokens carry
/// pseudo-locations v_m = v0_m + sum_n psi(u_m, z_n) x_n, with psi a softmax attention over the
/// context (so sum_n psi = 1 and v moves with the data). All attentions are TE attentions with
/// location updates. With Nc = 0 eq. 11 is undefined; the pseudo-locations are then placed
/// at v0_m + mean of the target inputs, which also moves with the data.
class TePtTnpImpl final : public NeuralProcessImpl {
 public:
  explicit TePtTnpImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;

 private:
  Mlp m_embed{nullptr};
  torch::Tensor m_pseudo_tokens;   // [M, Dz]
  torch::Tensor m_pseudo_offsets;  // v0: [M, Dx]
  torch::nn::Linear m_psi_query{nullptr}, m_psi_key{nullptr};
  std::vector<TeAttentionBlock> m_pseudo_from_context, m_context_from_pseudo, m_target_from_pseudo;
  GaussianHead m_head{nullptr};
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The pttnp kind's options.
using PtTnpOptions = OptionsOf<TransformerOptions, PseudoTokenOptions>;
ModelSpec pttnp_spec();
/// The tepttnp kind's options.
using TePtTnpOptions =
    OptionsOf<TransformerOptions, TeAttentionOptions, PseudoTokenOptions, PseudoLocationOptions>;
ModelSpec tepttnp_spec();

}  // namespace npe
