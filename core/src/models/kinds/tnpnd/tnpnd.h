#pragma once

#include <memory>
#include <vector>

#include "models/tnp_encoders.h"
#include "npe/models/model.h"
#include "npe/models/model_spec.h"

namespace npe {

/// Non-diagonal head of Nguyen & Grover's TNP-ND (Section 3.3): the mean from an MLP on the
/// target tokens; for the covariance a further stack of self-attention layers over the target
/// tokens and a projection MLP to one vector h in R^p per target value, giving
///  - "cholesky": Sigma = L L^T, L = lower(H H^T) (their eq. 10), diagonal ||h_i||^2 +
///    min_stddev so that it is positive;
///  - "lowrank": Sigma = diag(exp d) + A A^T with [d_i, a_i] = h_i in R^(1+p).
/// With translation_equivariant the target self-attention is TE attention on the target
/// locations, so Sigma is invariant to translations (TE-TNP-ND). Registers "mean",
/// "covariance<l>" and "projection".
class NdHead {
 public:
  NdHead(torch::nn::Module& owner, const ModelConfig& config, bool translation_equivariant);
  /// zt [B,Nt,Dz] (and xt [B,Nt,Dx] when equivariant) -> the joint Gaussian (float64 factor).
  JointGaussian joint(const torch::Tensor& zt, const torch::Tensor& xt);
  /// The marginals without factorising the covariance.
  Prediction marginals(const torch::Tensor& zt, const torch::Tensor& xt);

 private:
  torch::Tensor mean(const torch::Tensor& zt);
  /// H [B, Nt*Dy, p] ("cholesky") or [B, Nt*Dy, 1+p] ("lowrank"), float64.
  torch::Tensor factors(const torch::Tensor& zt, const torch::Tensor& xt);

  Mlp m_mean{nullptr};
  std::vector<AttentionBlock> m_layers;
  std::vector<TeAttentionBlock> m_te_layers;
  Mlp m_projection{nullptr};
  int64_t m_dim_y, m_projection_dim;
  bool m_low_rank;
  double m_min_stddev;
};

/// TNP-ND: the TNP-D encoder with the non-diagonal head.
class TnpndImpl final : public NeuralProcessImpl {
 public:
  explicit TnpndImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;
  std::optional<JointGaussian> joint_impl(const Task& task) override;

 private:
  std::unique_ptr<TnpdEncoder> m_encoder;
  std::unique_ptr<NdHead> m_head;
};

/// TE-TNP-ND (this project's; in no paper): the TE-TNP encoder with a translation-equivariant
/// non-diagonal head, so joint predictions (mean and covariance) move with the data.
class TeTnpndImpl final : public NeuralProcessImpl {
 public:
  explicit TeTnpndImpl(const ModelConfig& config);

 protected:
  Prediction forward_impl(const Task& task) override;
  std::optional<JointGaussian> joint_impl(const Task& task) override;

 private:
  std::unique_ptr<TeTnpEncoder> m_encoder;
  std::unique_ptr<NdHead> m_head;
};

// The model kinds of this file, for the registry: each kind's options and specification.

/// The tnpnd kind's options.
using TnpndOptions = OptionsOf<TransformerOptions, CovarianceOptions>;
ModelSpec tnpnd_spec();
/// The tetnpnd kind's options.
using TeTnpndOptions =
    OptionsOf<TransformerOptions, TeAttentionOptions, LayerSharingOptions, CovarianceOptions>;
ModelSpec tetnpnd_spec();

}  // namespace npe
