#pragma once
// Encoders shared by the diagonal and joint transformer NPs. They register their modules on
// the model that owns them, under the names the models have always used, so checkpoints of the
// existing kinds load unchanged.

#include <vector>

#include <torch/nn/module.h>

#include "npe/ground/task.h"
#include "npe/models/model_config.h"
#include "npe/models/modules.h"

namespace npe {

/// Nguyen & Grover's TNP-D encoder: one stack of attention layers over the concatenated context
/// and target tokens with their mask (context -> context; each target -> the context, never
/// another target). Since every token attends exactly to the context, each layer runs with the
/// context alone as keys (the mask's result at (Nc+Nt) x Nc cost). Registers "embed" and
/// "layer<l>".
class TnpdEncoder {
 public:
  TnpdEncoder(torch::nn::Module& owner, const ModelConfig& config);
  /// Target tokens [B,Nt,Dz] after the last layer.
  torch::Tensor encode(const Task& task);

 private:
  Mlp m_embed{nullptr};
  std::vector<AttentionBlock> m_layers;
};

/// The TE-TNP encoder (Ashman et al. Section 3): output-only tokens, TE self-attention among
/// context tokens and TE cross-attention from targets per layer, with location updates (eq. 10)
/// when configured. Registers "embed", "self<l>" and "cross<l>".
class TeTnpEncoder {
 public:
  /// target_locations: whether the caller uses the target locations after the last layer (if
  /// not, the last cross-attention skips their update).
  TeTnpEncoder(torch::nn::Module& owner, const ModelConfig& config, bool target_locations);
  struct Output {
    torch::Tensor zt;              ///< [B,Nt,Dz]
    torch::Tensor xt;              ///< [B,Nt,Dx] after the location updates
    torch::Tensor last_attention;  ///< [B,H,Nt,Nc] when requested
  };
  Output encode(const Task& task, bool record_attention = false);

 private:
  Mlp m_embed{nullptr};
  std::vector<TeAttentionBlock> m_self, m_cross;
  int64_t m_dim_model;
  int64_t m_token_features;
  int64_t m_context_frequencies;
};

}  // namespace npe
