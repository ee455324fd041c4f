#include "npe/models/modules.h"

#include <cmath>
#include <optional>

#include <torch/torch.h>

#include "models/kernels/blocked_queries.h"
#include "models/kernels/pairwise_kernel_attention.h"
#include "models/kernels/pairwise_location_update.h"
#include "npe/models/compute_settings.h"

namespace npe {
namespace {

// Largest pairwise tensor (elements) built at once at inference; larger query sets are
// processed in chunks so that image-sized queries do not exhaust memory.
constexpr int64_t kPairwiseElementBudget = int64_t{1} << 23;

}  // namespace

MlpImpl::MlpImpl(int64_t in, const std::vector<int64_t>& hidden, int64_t out) {
  int64_t width = in;
  for (size_t i = 0; i <= hidden.size(); ++i) {
    const int64_t next = i < hidden.size() ? hidden[i] : out;
    m_layers.push_back(
        register_module("linear" + std::to_string(i), torch::nn::Linear(width, next)));
    width = next;
  }
}

torch::Tensor MlpImpl::forward(torch::Tensor x) {
  for (size_t i = 0; i < m_layers.size(); ++i) {
    x = m_layers[i]->forward(x);
    if (i + 1 < m_layers.size()) x = torch::relu(x);
  }
  return x;
}

GaussianHeadImpl::GaussianHeadImpl(int64_t in, int64_t hidden, int64_t dim_y, bool heteroscedastic,
                                   double min_stddev)
    : m_dim_y(dim_y), m_heteroscedastic(heteroscedastic), m_min_stddev(min_stddev) {
  m_mlp = register_module(
      "mlp", Mlp(in, std::vector<int64_t>{hidden, hidden}, heteroscedastic ? 2 * dim_y : dim_y));
  if (!heteroscedastic) {
    m_log_noise = register_parameter("log_noise", torch::full({dim_y}, std::log(0.1)));
  }
}

Prediction GaussianHeadImpl::forward(const torch::Tensor& z) {
  auto out = m_mlp->forward(z);
  if (m_heteroscedastic) {
    auto parts = out.split(m_dim_y, -1);
    auto stddev = m_min_stddev + torch::sqrt(torch::softplus(parts[1]));
    return {parts[0], stddev};
  }
  auto stddev = (m_min_stddev + m_log_noise.exp()).expand_as(out);
  return {out, stddev};
}

MultiHeadAttentionImpl::MultiHeadAttentionImpl(int64_t dim_model, int64_t num_heads,
                                               int64_t head_dim)
    : m_heads(num_heads), m_head_dim(head_dim) {
  const auto inner = num_heads * head_dim;
  m_q = register_module("q",
                        torch::nn::Linear(torch::nn::LinearOptions(dim_model, inner).bias(false)));
  m_k = register_module("k",
                        torch::nn::Linear(torch::nn::LinearOptions(dim_model, inner).bias(false)));
  m_v = register_module("v",
                        torch::nn::Linear(torch::nn::LinearOptions(dim_model, inner).bias(false)));
  m_out = register_module("out", torch::nn::Linear(inner, dim_model));
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& zq, const torch::Tensor& zk,
                                              torch::Tensor* weights, const torch::Tensor& mask) {
  const auto b = zq.size(0), nq = zq.size(1), nk = zk.size(1);
  if (nk == 0) {
    if (weights) *weights = torch::zeros({b, m_heads, nq, 0}, zq.options());
    return torch::zeros_like(zq);
  }
  auto split_heads = [&](const torch::Tensor& t, int64_t n) {
    return t.view({b, n, m_heads, m_head_dim}).permute({0, 2, 1, 3});
  };
  auto q = split_heads(m_q->forward(zq), nq);
  auto k = split_heads(m_k->forward(zk), nk);
  auto v = split_heads(m_v->forward(zk), nk);
  auto logits = q.matmul(k.transpose(-1, -2)) / std::sqrt(double(m_head_dim));
  torch::Tensor attention;
  if (mask.defined()) {
    // A large finite fill instead of -inf: fully masked rows then softmax to finite values
    // (no NaN in the backward pass either) and get zero weights below.
    logits = logits.masked_fill(mask.logical_not(), -1e30);
    attention =
        torch::softmax(logits, -1).masked_fill(mask.any(-1, /*keepdim=*/true).logical_not(), 0.0);
  } else {
    attention = torch::softmax(logits, -1);
  }
  if (weights) *weights = attention;
  auto out = attention.matmul(v).permute({0, 2, 1, 3}).reshape({b, nq, m_heads * m_head_dim});
  return m_out->forward(out);
}

AttentionBlockImpl::AttentionBlockImpl(int64_t dim_model, int64_t num_heads, int64_t head_dim) {
  m_norm_q =
      register_module("norm_q", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim_model})));
  m_norm_k =
      register_module("norm_k", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim_model})));
  m_norm_ff =
      register_module("norm_ff", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim_model})));
  m_attention = register_module("attention", MultiHeadAttention(dim_model, num_heads, head_dim));
  m_feed_forward =
      register_module("feed_forward", Mlp(dim_model, std::vector<int64_t>{dim_model}, dim_model));
}

torch::Tensor AttentionBlockImpl::forward(const torch::Tensor& zq, const torch::Tensor& zk,
                                          torch::Tensor* weights, const torch::Tensor& mask) {
  auto z = zq + m_attention->forward(m_norm_q->forward(zq), m_norm_k->forward(zk), weights, mask);
  return z + m_feed_forward->forward(m_norm_ff->forward(z));
}

TeMultiHeadAttentionImpl::TeMultiHeadAttentionImpl(
    int64_t dim_model, int64_t num_heads, int64_t head_dim, int64_t dim_x, int64_t pairwise_width,
    int64_t distance_frequencies, bool update_locations, int64_t context_frequencies)
    : m_heads(num_heads), m_head_dim(head_dim), m_update_locations(update_locations) {
  const auto inner = num_heads * head_dim;
  using torch::nn::Linear;
  using torch::nn::LinearOptions;
  m_q = register_module("q", Linear(LinearOptions(dim_model, inner).bias(false)));
  m_k = register_module("k", Linear(LinearOptions(dim_model, inner).bias(false)));
  m_v = register_module("v", Linear(LinearOptions(dim_model, inner).bias(false)));
  m_out = register_module("out", Linear(inner, dim_model));
  m_rho_dots = register_module("rho_dots", Linear(num_heads, pairwise_width));
  m_rho_dx = register_module("rho_dx", Linear(LinearOptions(dim_x, pairwise_width).bias(false)));
  m_rho_hidden = register_module("rho_hidden", Linear(pairwise_width, pairwise_width));
  m_rho_out = register_module("rho_out", Linear(pairwise_width, num_heads));
  if (distance_frequencies > 0) {
    m_rho_fourier = register_module(
        "rho_fourier",
        Linear(LinearOptions(2 * dim_x * distance_frequencies, pairwise_width).bias(false)));
    // Periods 1/8 .. 16 cover the scales of the GP tasks (0.25 .. 4) with room either side.
    const auto periods =
        distance_frequencies == 1
            ? torch::ones({1})
            : torch::logspace(std::log2(0.125), std::log2(16.0), distance_frequencies, 2.0);
    m_frequencies = register_parameter("rho_frequencies", (2.0 * M_PI) / periods);
  }
  if (context_frequencies > 0) {
    m_rho_spectrum = register_module(
        "rho_spectrum",
        Linear(LinearOptions(2 * dim_x * context_frequencies, pairwise_width).bias(false)));
  }
  if (update_locations) {
    m_phi = register_module(
        "phi", Mlp(num_heads, std::vector<int64_t>{pairwise_width, pairwise_width}, 1));
  }
}

TeMultiHeadAttentionImpl::Output TeMultiHeadAttentionImpl::forward(const torch::Tensor& zq,
                                                                   const torch::Tensor& xq,
                                                                   const torch::Tensor& zk,
                                                                   const torch::Tensor& xk,
                                                                   bool return_weights) {
  const auto b = zq.size(0), nq = zq.size(1), nk = zk.size(1);
  if (nk == 0) {
    Output out{torch::zeros_like(zq), xq, {}};
    if (return_weights) out.weights = torch::zeros({b, m_heads, nq, 0}, zq.options());
    return out;
  }
  // Under bf16 autocast the projections come out in bfloat16; the pairwise part takes float32
  // (its own kernel decides what runs in bf16).
  auto project = [&](torch::nn::Linear& layer, const torch::Tensor& z) {
    return layer->forward(z).to(zq.scalar_type()).view({b, z.size(1), m_heads, m_head_dim});
  };
  const auto q = project(m_q, zq);                        // [B,Nq,H,Dh]
  const auto k = project(m_k, zk).permute({0, 2, 1, 3});  // [B,H,Nk,Dh]
  const auto v = project(m_v, zk).permute({0, 2, 1, 3});
  Pairwise pairwise;
  {
    // The pairwise MLP, softmax and weighted sum are outside autocast: the fused kernel runs
    // its own bf16 tiles, and the plain path is the float32 reference.
    const AutocastOff pairwise_in_float32;
    pairwise = pairwise_part_in_blocks(q, xq, k, v, xk, return_weights);
  }
  Output out{m_out->forward(pairwise.attended), m_update_locations ? pairwise.x : xq, {}};
  if (return_weights) out.weights = pairwise.weights;
  return out;
}

int64_t TeMultiHeadAttentionImpl::pair_bytes(const torch::Tensor& q, bool fused) const {
  const int64_t width = m_rho_hidden->options.in_features();
  const int64_t dim_x = m_rho_dx->options.in_features();
  if (fused) {
    // What the fused kernel keeps per pair: rho's second activation (in bfloat16 under bf16)
    // and the attention weights.
    const int64_t hidden = pairwise_precision() == Precision::bf16 ? 2 : 4;
    return width * hidden + m_heads * 4;
  }
  // The plain path while it is differentiated, counted from its operations: rho's five
  // width-wide tensors (phi's four more with the location update), the logits, weights and
  // their gradients, the differences and Fourier features.
  const int64_t fourier = (m_rho_fourier ? m_rho_fourier->options.in_features() : 0) +
                          (m_rho_spectrum ? m_rho_spectrum->options.in_features() : 0);
  const int64_t floats =
      (m_update_locations ? 12 : 8) * width + 8 * m_heads + 4 * dim_x + 3 * fourier;
  return floats * static_cast<int64_t>(q.element_size());
}

TeMultiHeadAttentionImpl::Pairwise TeMultiHeadAttentionImpl::pairwise_part_in_blocks(
    const torch::Tensor& q, const torch::Tensor& xq, const torch::Tensor& k, const torch::Tensor& v,
    const torch::Tensor& xk, bool return_weights) {
  const auto b = q.size(0), nq = q.size(1), nk = k.size(2);
  // The fused kernel's first layer sees the dot products and the raw difference only.
  const bool fused_applies =
      pairwise_kernel_attention_applies(q) && !m_rho_fourier && !m_rho_spectrum;
  const auto implementation = attention_implementation();
  const bool cuda = q.device().is_cuda();
  const int64_t budget = attention_block_bytes(cuda);
  const bool fused = implementation != AttentionImplementation::plain && fused_applies;
  if (torch::GradMode::is_enabled()) {
    const double kept = double(b) * double(nq) * double(nk) * double(pair_bytes(q, fused));
    const bool blocked = implementation == AttentionImplementation::blocked ||
                         (implementation == AttentionImplementation::automatic &&
                          (cuda || kept > double(budget) / 4.0));
    if (!blocked) return pairwise_part(q, xq, k, v, xk, return_weights, fused);
    // The plain path's count bounds the fused one's too, so one count serves both.
    auto blocks = plan_query_blocks(b, nq, nk * pair_bytes(q, /*fused=*/false), budget);
    auto self = std::static_pointer_cast<TeMultiHeadAttentionImpl>(shared_from_this());
    const bool update = m_update_locations;
    auto block = [self, return_weights, fused, update](
                     const torch::Tensor& q, const torch::Tensor& xq, const torch::Tensor& k,
                     const torch::Tensor& v, const torch::Tensor& xk) {
      auto part = self->pairwise_part(q, xq, k, v, xk, return_weights, fused);
      std::vector<torch::Tensor> outputs{part.attended};
      if (update) outputs.push_back(part.x);
      // Query rows second, as the blocks are cut: [b, rows, H, Nk].
      if (return_weights) outputs.push_back(part.weights.transpose(1, 2));
      return outputs;
    };
    std::vector<torch::Tensor> parameters;
    for (const auto& p : this->parameters()) {
      if (p.requires_grad()) parameters.push_back(p);
    }
    const auto outputs =
        blocked_over_queries(block, std::move(blocks), q, xq, k, v, xk, parameters);
    Pairwise result{outputs[0], update ? outputs[1] : torch::Tensor(), {}};
    if (return_weights) result.weights = outputs.back().transpose(1, 2);
    return result;
  }
  // Without gradients nothing is kept, and queries are taken in chunks whose pair tensors stay
  // small enough for image-sized query sets.
  const int64_t per_query = b * nk * m_rho_hidden->options.in_features();
  if (nq * per_query <= kPairwiseElementBudget) {
    return pairwise_part(q, xq, k, v, xk, return_weights, fused);
  }
  const int64_t chunk = std::max<int64_t>(1, kPairwiseElementBudget / per_query);
  std::vector<torch::Tensor> attended, xs, weights;
  for (int64_t start = 0; start < nq; start += chunk) {
    const auto rows = std::min(nq - start, chunk);
    auto part = pairwise_part(q.narrow(1, start, rows), xq.narrow(1, start, rows), k, v, xk,
                              return_weights, fused);
    attended.push_back(part.attended);
    if (m_update_locations) xs.push_back(part.x);
    if (return_weights) weights.push_back(part.weights);
  }
  Pairwise result{torch::cat(attended, 1), {}, {}};
  if (m_update_locations) result.x = torch::cat(xs, 1);
  if (return_weights) result.weights = torch::cat(weights, 2);
  return result;
}

TeMultiHeadAttentionImpl::Pairwise TeMultiHeadAttentionImpl::pairwise_part(
    const torch::Tensor& q, const torch::Tensor& xq, const torch::Tensor& k, const torch::Tensor& v,
    const torch::Tensor& xk, bool return_weights, bool fused) {
  const auto b = q.size(0), nq = q.size(1);
  // Differences are formed before any projection: projecting x_n and x_m separately and
  // subtracting would cancel large, rounded numbers when the inputs are far from the origin.
  torch::Tensor diff;             // [B,Nq,Nk,Dx], built on the plain path or when needed below
  torch::Tensor alpha, attended;  // alpha [B,Nq,Nk,H] sums to 1 over the keys
  torch::Tensor weights;          // [B,H,Nq,Nk]
  if (fused) {
    auto kernel =
        pairwise_kernel_attention(q, k.permute({0, 2, 1, 3}), v.permute({0, 2, 1, 3}), xq, xk,
                                  torch::cat({m_rho_dots->weight, m_rho_dx->weight}, 1),
                                  m_rho_dots->bias, m_rho_hidden->weight, m_rho_hidden->bias,
                                  m_rho_out->weight, m_rho_out->bias, pairwise_precision());
    attended = kernel[0].reshape({b, nq, m_heads * m_head_dim});
    weights = kernel[1];
    alpha = weights.permute({0, 2, 3, 1});
  } else {
    // [B,H,Nq,Nk] -> [B,Nq,Nk,H]: the pairwise MLP works on the last dimension.
    auto dots =
        (q.permute({0, 2, 1, 3}).matmul(k.transpose(-1, -2)) / std::sqrt(double(m_head_dim)))
            .permute({0, 2, 3, 1});
    diff = xq.unsqueeze(2) - xk.unsqueeze(1);
    auto hidden = m_rho_dots->forward(dots).add_(m_rho_dx->forward(diff));
    if (m_rho_fourier) {
      const auto phase = diff.unsqueeze(-1) * m_frequencies;  // [B,Nq,Nk,Dx,F]
      hidden.add_(m_rho_fourier->forward(torch::cat({phase.cos(), phase.sin()}, -1).flatten(-2)));
    }
    if (m_rho_spectrum) {
      TORCH_CHECK(m_spectrum.frequencies.defined() && m_spectrum.frequencies.size(0) == b,
                  "TE attention with context frequencies needs the context's spectrum");
      const auto shape =
          std::vector<int64_t>{b, 1, 1, diff.size(3), m_spectrum.frequencies.size(2)};
      const auto phase = diff.unsqueeze(-1) * m_spectrum.frequencies.view(shape);  // [B,Nq,Nk,Dx,J]
      const auto weight = m_spectrum.weights.view(shape);
      hidden.add_(m_rho_spectrum->forward(
          torch::cat({phase.cos() * weight, phase.sin() * weight}, -1).flatten(-2)));
    }
    hidden = torch::relu(m_rho_hidden->forward(torch::relu(hidden)));
    alpha = torch::softmax(m_rho_out->forward(hidden), 2);
    weights = alpha.permute({0, 3, 1, 2});
    attended = weights.matmul(v).permute({0, 2, 1, 3}).reshape({b, nq, m_heads * m_head_dim});
  }
  Pairwise out{attended, {}, {}};
  if (m_update_locations) {
    // Paper eq. 10: x_n + (1/Nk) sum_m (x_n - x_m) phi(alpha_nm), with phi acting on the
    // attention weights (post-softmax), as in the paper and the authors' code.
    if (fused) {
      const auto& phi = m_phi->layers();
      TORCH_CHECK(phi.size() == 3, "phi has ", phi.size(), " layers, the fused update takes 3");
      out.x = pairwise_location_update(weights, xq, xk, phi[0]->weight, phi[0]->bias,
                                       phi[1]->weight, phi[1]->bias, phi[2]->weight, phi[2]->bias,
                                       pairwise_precision());
    } else {
      if (!diff.defined()) diff = xq.unsqueeze(2) - xk.unsqueeze(1);
      auto s = m_phi->forward(alpha);  // [B,Nq,Nk,1]
      out.x = xq + (diff * s).mean(2);
    }
  }
  if (return_weights) out.weights = weights;
  return out;
}

TeAttentionBlockImpl::TeAttentionBlockImpl(int64_t dim_model, int64_t num_heads, int64_t head_dim,
                                           int64_t dim_x, int64_t pairwise_width,
                                           int64_t distance_frequencies, bool update_locations,
                                           int64_t context_frequencies) {
  m_norm_q =
      register_module("norm_q", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim_model})));
  m_norm_k =
      register_module("norm_k", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim_model})));
  m_norm_ff =
      register_module("norm_ff", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim_model})));
  m_attention =
      register_module("attention", TeMultiHeadAttention(dim_model, num_heads, head_dim, dim_x,
                                                        pairwise_width, distance_frequencies,
                                                        update_locations, context_frequencies));
  m_feed_forward =
      register_module("feed_forward", Mlp(dim_model, std::vector<int64_t>{dim_model}, dim_model));
}

TeMultiHeadAttentionImpl::Output TeAttentionBlockImpl::forward(const torch::Tensor& zq,
                                                               const torch::Tensor& xq,
                                                               const torch::Tensor& zk,
                                                               const torch::Tensor& xk,
                                                               bool return_weights) {
  // Under bf16 on the CPU the block's linear layers take bfloat16 inputs too (autocast); the
  // residual stream and layer norms stay float32.
  const Bf16Autocast bf16(pairwise_precision() == Precision::bf16 && zq.device().is_cpu() &&
                              zq.scalar_type() == torch::kFloat32,
                          /*cuda=*/false);
  auto out =
      m_attention->forward(m_norm_q->forward(zq), xq, m_norm_k->forward(zk), xk, return_weights);
  auto z = zq + out.z;
  out.z = z + m_feed_forward->forward(m_norm_ff->forward(z));
  return out;
}

}  // namespace npe
