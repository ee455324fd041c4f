#include "models/kinds/tnpnd/tnpnd.h"

#include <string>

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/parameter_terms.h"
#include "npe/errors.h"

namespace npe {
namespace {

// exp(d) of the low-rank diagonal stays within float64 range and away from 0.
constexpr double kLogDiagonalBound = 15.0;

// FLOPs of the TNP-ND head (mean MLP, target self-attention, projection, Sigma from H) on nt
// targets.
double nd_head_flops(const ModelConfig& c, double nt, bool translation_equivariant) {
  using namespace flop_terms;
  const auto& cov = c.options<CovarianceOptions>();
  const double dz = double(c.options<TransformerOptions>().dim_model), dy = double(c.dim_y),
               p = double(cov.projection_dim);
  const bool low_rank = cov.covariance == "lowrank";
  double flops = mlp(nt, dz, {dz, dz}, dy);
  for (int64_t l = 0; l < cov.covariance_layers; ++l) {
    if (translation_equivariant) {
      const bool update =
          c.options<TeAttentionOptions>().update_locations && l + 1 < cov.covariance_layers;
      flops += te_block(c, nt, nt, update, /*context_spectrum=*/false);
    } else {
      flops += block(c, nt, nt);
    }
  }
  flops += mlp(nt, dz, std::vector<double>(size_t(cov.projection_layers - 1), dz),
               dy * (p + (low_rank ? 1.0 : 0.0)));
  const double n = nt * dy;
  flops += 2.0 * n * n * p;                // H H^T (or A A^T)
  if (low_rank) flops += n * n * n / 3.0;  // its Cholesky factorisation
  return flops;
}

}  // namespace

NdHead::NdHead(torch::nn::Module& owner, const ModelConfig& c, bool translation_equivariant)
    : m_dim_y(c.dim_y),
      m_projection_dim(c.options<CovarianceOptions>().projection_dim),
      m_low_rank(c.options<CovarianceOptions>().covariance == "lowrank"),
      m_min_stddev(c.min_stddev) {
  const auto& cov = c.options<CovarianceOptions>();
  const auto& transformer = c.options<TransformerOptions>();
  const auto dz = transformer.dim_model;
  m_mean = owner.register_module("mean", Mlp(dz, std::vector<int64_t>{dz, dz}, c.dim_y));
  for (int64_t l = 0; l < cov.covariance_layers; ++l) {
    const auto name = "covariance" + std::to_string(l);
    if (translation_equivariant) {
      const auto& te = c.options<TeAttentionOptions>();
      m_te_layers.push_back(owner.register_module(
          name, TeAttentionBlock(dz, transformer.num_heads, transformer.head_dim,
                                 place_feature_route(c).pairwise_dims, te.pairwise_width,
                                 te.distance_frequencies,
                                 te.update_locations && l + 1 < cov.covariance_layers)));
    } else {
      m_layers.push_back(owner.register_module(
          name, AttentionBlock(dz, transformer.num_heads, transformer.head_dim)));
    }
  }
  const auto per_value = cov.projection_dim + (m_low_rank ? 1 : 0);
  m_projection = owner.register_module(
      "projection",
      Mlp(dz, std::vector<int64_t>(size_t(cov.projection_layers - 1), dz), c.dim_y * per_value));
}

torch::Tensor NdHead::mean(const torch::Tensor& zt) {
  return m_mean->forward(zt);
}

torch::Tensor NdHead::factors(const torch::Tensor& zt, const torch::Tensor& xt) {
  check_joint_size(zt.size(1), m_dim_y, "a non-diagonal TNP");
  auto z = zt;
  auto x = xt;
  for (auto& layer : m_layers) z = layer->forward(z, z);
  for (auto& layer : m_te_layers) {
    auto out = layer->forward(z, x, z, x);
    z = out.z;
    x = out.x;
  }
  const auto batch = zt.size(0), num_targets = zt.size(1);
  const auto per_value = m_projection_dim + (m_low_rank ? 1 : 0);
  // Target-major order of the values: target n, output d at n * Dy + d.
  return m_projection->forward(z)
      .reshape({batch, num_targets * m_dim_y, per_value})
      .to(torch::kFloat64);
}

JointGaussian NdHead::joint(const torch::Tensor& zt, const torch::Tensor& xt) {
  auto mu = mean(zt);
  if (zt.size(1) == 0) {
    return {mu, torch::zeros({zt.size(0), 0, 0}, mu.options().dtype(torch::kFloat64))};
  }
  auto h = factors(zt, xt);
  if (m_low_rank) {
    auto log_diagonal = h.select(-1, 0).clamp(-kLogDiagonalBound, kLogDiagonalBound);
    auto a = h.narrow(-1, 1, m_projection_dim);
    auto covariance = torch::diag_embed(log_diagonal.exp() + m_min_stddev * m_min_stddev) +
                      a.matmul(a.transpose(-1, -2));
    return joint_gaussian_from_covariance(mu, covariance);
  }
  // Eq. 10: L = lower(H H^T); its diagonal ||h_i||^2 is made strictly positive.
  auto gram = h.matmul(h.transpose(-1, -2));
  auto diagonal = gram.diagonal(0, -2, -1) + m_min_stddev;
  return {mu, torch::tril(gram, -1) + torch::diag_embed(diagonal)};
}

Prediction NdHead::marginals(const torch::Tensor& zt, const torch::Tensor& xt) {
  if (!m_low_rank || zt.size(1) == 0) return joint(zt, xt).marginals();
  auto mu = mean(zt);
  auto h = factors(zt, xt);
  auto log_diagonal = h.select(-1, 0).clamp(-kLogDiagonalBound, kLogDiagonalBound);
  auto variance = log_diagonal.exp() + m_min_stddev * m_min_stddev +
                  h.narrow(-1, 1, m_projection_dim).square().sum(-1);
  return {mu, variance.sqrt().view(mu.sizes()).to(mu.scalar_type())};
}

TnpndImpl::TnpndImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  m_encoder = std::make_unique<TnpdEncoder>(*this, c);
  m_head = std::make_unique<NdHead>(*this, c, /*translation_equivariant=*/false);
}

Prediction TnpndImpl::forward_impl(const Task& task) {
  return m_head->marginals(m_encoder->encode(task), task.xt);
}

std::optional<JointGaussian> TnpndImpl::joint_impl(const Task& task) {
  return m_head->joint(m_encoder->encode(task), task.xt);
}

TeTnpndImpl::TeTnpndImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  m_encoder = std::make_unique<TeTnpEncoder>(*this, c, /*target_locations=*/true);
  m_head = std::make_unique<NdHead>(*this, c, /*translation_equivariant=*/true);
}

Prediction TeTnpndImpl::forward_impl(const Task& task) {
  auto encoded = m_encoder->encode(task);
  return m_head->marginals(encoded.zt, encoded.xt);
}

std::optional<JointGaussian> TeTnpndImpl::joint_impl(const Task& task) {
  auto encoded = m_encoder->encode(task);
  return m_head->joint(encoded.zt, encoded.xt);
}

ModelSpec tnpnd_spec() {
  ModelSpec spec;
  spec.info = {
      "tnpnd",
      "TNP-ND",
      "Nguyen & Grover's TNP-ND: TNP-D with a multivariate Gaussian over all targets (coherent "
      "samples; at most 4096 targets x outputs).",
      false,
      false,
      false,
      true,
      2,
      true};
  spec.make_options = options_of<TnpndOptions>;
  spec.make = make_model_of<TnpndImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    return tnpd_encoder(c) + nd_head(c, /*translation_equivariant=*/false);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dx = double(c.dim_x), dy = double(c.dim_y),
                 layers = double(c.options<TransformerOptions>().num_layers);
    return embedder(c, nc + nt, dx + dy + 1) + layers * block(c, nc + nt, nc) +
           nd_head_flops(c, nt, false);
  };
  return spec;
}

ModelSpec tetnpnd_spec() {
  ModelSpec spec;
  spec.info = {
      "tetnpnd",
      "TE-TNP-ND",
      "TE-TNP encoder with a translation-equivariant TNP-ND covariance head: joint predictions "
      "that move with the data.",
      true,
      false,
      false,
      true,
      2,
      true};
  spec.make_options = options_of<TeTnpndOptions>;
  spec.make = make_model_of<TeTnpndImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    return te_tnp_encoder(c, /*target_locations=*/true) +
           nd_head(c, /*translation_equivariant=*/true);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double layers = double(c.options<TransformerOptions>().num_layers);
    const bool u = c.options<TeAttentionOptions>().update_locations;
    return te_tokens(c, nc, nt) + context_spectrum(c, nc) +
           layers * (te_block(c, nc, nc, u) + te_block(c, nt, nc, u)) + nd_head_flops(c, nt, true);
  };
  return spec;
}

}  // namespace npe
