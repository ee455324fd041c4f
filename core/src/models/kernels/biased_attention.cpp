#include "biased_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <torch/torch.h>

#include "npe/models/compute_settings.h"
#include "rbf_bias.h"

namespace npe {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using torch::indexing::Slice;

constexpr int64_t kChunkElements = int64_t{1} << 21;

struct Chunking {
  int64_t queries, keys;
  Chunking(const BiasedAttentionChunks& requested, int64_t batch_heads, int64_t nq, int64_t nk) {
    keys = requested.keys > 0 ? requested.keys : std::min<int64_t>(std::max<int64_t>(nk, 1), 1024);
    queries = requested.queries > 0 ? requested.queries
                                    : std::max<int64_t>(1, kChunkElements / (batch_heads * keys));
  }
};

// The backward pass needs each chunk's logits again. When all of them fit in this many bytes
// (training batches of a few hundred points) the forward pass keeps them, which saves the
// backward pass a product and a pass of exponentials per chunk; above it they are recomputed
// chunk by chunk and memory stays bounded.
constexpr int64_t kKeptLogitsBytes = int64_t{64} << 20;

// The bias: every feature of a and b on the distance over all input dimensions, or, with
// `time_features` > 0, the first F - time_features on the distance over all dimensions but the
// last (space) and the last time_features on the distance in the last dimension (time), as
// BSA-TNP's separate space and time biases.
void add_bias(Tensor& logits, const Tensor& xq, const Tensor& xk, const Tensor& a,
              const Tensor& rates, int64_t time_features) {
  if (time_features == 0) return add_rbf_bias_(logits, xq, xk, a, rates);
  const int64_t space = xq.size(-1) - 1, f = a.size(1) - time_features;
  add_rbf_bias_(logits, xq.narrow(-1, 0, space), xk.narrow(-1, 0, space), a.narrow(1, 0, f),
                rates.narrow(1, 0, f));
  add_rbf_bias_(logits, xq.narrow(-1, space, 1), xk.narrow(-1, space, 1),
                a.narrow(1, f, time_features), rates.narrow(1, f, time_features));
}

void accumulate_bias_gradients(const Tensor& grad_logits, const Tensor& xq, const Tensor& xk,
                               const Tensor& a, const Tensor& rates, int64_t time_features,
                               Tensor& grad_a, Tensor& grad_rates) {
  if (time_features == 0) {
    return accumulate_rbf_bias_gradients(grad_logits, xq, xk, a, rates, grad_a, grad_rates);
  }
  const int64_t space = xq.size(-1) - 1, f = a.size(1) - time_features;
  // Views into the full gradients, which the accumulation adds to in place.
  auto space_a = grad_a.narrow(1, 0, f), space_rates = grad_rates.narrow(1, 0, f);
  auto time_a = grad_a.narrow(1, f, time_features);
  auto time_rates = grad_rates.narrow(1, f, time_features);
  accumulate_rbf_bias_gradients(grad_logits, xq.narrow(-1, 0, space), xk.narrow(-1, 0, space),
                                a.narrow(1, 0, f), rates.narrow(1, 0, f), space_a, space_rates);
  accumulate_rbf_bias_gradients(grad_logits, xq.narrow(-1, space, 1), xk.narrow(-1, space, 1),
                                a.narrow(1, f, time_features), rates.narrow(1, f, time_features),
                                time_a, time_rates);
}

class BiasedAttention : public torch::autograd::Function<BiasedAttention> {
 public:
  static variable_list forward(AutogradContext* ctx, const Tensor& q, const Tensor& k,
                               const Tensor& v, const Tensor& xq, const Tensor& xk,
                               const Tensor& amplitudes, const Tensor& log_rates,
                               int64_t query_chunk, int64_t key_chunk, bool for_backward,
                               bool recompute_logits, int64_t time_features) {
    const int64_t b = q.size(0), h = q.size(1), nq = q.size(2), nk = k.size(2);
    const double scale = 1.0 / std::sqrt(double(q.size(3)));
    const Chunking chunks({query_chunk, key_chunk}, b * h, nq, nk);
    const auto rates = log_rates.exp();
    const bool keep_logits =
        for_backward && !recompute_logits && b * h * nq * nk * q.element_size() <= kKeptLogitsBytes;
    const auto kept_logits = keep_logits ? torch::empty({b, h, nq, nk}, q.options()) : Tensor();
    auto out = torch::zeros({b, h, nq, v.size(3)}, q.options());
    auto lse = torch::full({b, h, nq}, -std::numeric_limits<float>::infinity(), q.options());
    for (int64_t q0 = 0; q0 < nq; q0 += chunks.queries) {
      const auto qs = Slice(q0, std::min(nq, q0 + chunks.queries));
      const auto qi = q.index({Slice(), Slice(), qs});
      const auto xqi = xq.index({Slice(), qs});
      Tensor running_max, running_sum, acc;
      for (int64_t k0 = 0; k0 < nk; k0 += chunks.keys) {
        const auto ks = Slice(k0, std::min(nk, k0 + chunks.keys));
        auto logits =
            torch::matmul(qi, k.index({Slice(), Slice(), ks}).transpose(-1, -2)).mul_(scale);
        add_bias(logits, xqi, xk.index({Slice(), ks}), amplitudes, rates, time_features);
        if (keep_logits) kept_logits.index({Slice(), Slice(), qs, ks}).copy_(logits);
        const auto chunk_max = std::get<0>(logits.max(-1, /*keepdim=*/true));
        if (!running_max.defined()) {
          running_max = chunk_max;
          auto p = (logits - running_max).exp_();
          running_sum = p.sum(-1, true);
          acc = torch::matmul(p, v.index({Slice(), Slice(), ks}));
          continue;
        }
        const auto new_max = torch::maximum(running_max, chunk_max);
        const auto rescale = (running_max - new_max).exp_();
        auto p = (logits - new_max).exp_();
        running_sum = running_sum * rescale + p.sum(-1, true);
        acc = acc * rescale + torch::matmul(p, v.index({Slice(), Slice(), ks}));
        running_max = new_max;
      }
      if (!acc.defined()) continue;  // no keys: zeros
      out.index_put_({Slice(), Slice(), qs}, acc / running_sum);
      lse.index_put_({Slice(), Slice(), qs}, (running_max + running_sum.log()).squeeze(-1));
    }
    if (!for_backward) return {out};
    ctx->saved_data["query_chunk"] = chunks.queries;
    ctx->saved_data["key_chunk"] = chunks.keys;
    ctx->saved_data["time_features"] = time_features;
    ctx->save_for_backward({q, k, v, xq, xk, amplitudes, log_rates, out, lse, kept_logits});
    return {out};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &xq = saved[3], &xk = saved[4],
               &amplitudes = saved[5], &log_rates = saved[6], &out = saved[7], &lse = saved[8],
               &kept_logits = saved[9];
    const int64_t query_chunk = ctx->saved_data["query_chunk"].toInt();
    const int64_t key_chunk = ctx->saved_data["key_chunk"].toInt();
    const int64_t time_features = ctx->saved_data["time_features"].toInt();
    const int64_t nq = q.size(2), nk = k.size(2);
    const double scale = 1.0 / std::sqrt(double(q.size(3)));
    const auto rates = log_rates.exp();
    const auto grad_out = grads[0];
    auto grad_q = torch::zeros_like(q), grad_k = torch::zeros_like(k),
         grad_v = torch::zeros_like(v);
    auto grad_a = torch::zeros_like(amplitudes), grad_rates = torch::zeros_like(amplitudes);
    // D_n = sum_d dO_nd O_nd: the softmax's backward needs it per query.
    const auto delta = (grad_out * out).sum(-1, true);
    for (int64_t q0 = 0; q0 < nq; q0 += query_chunk) {
      const auto qs = Slice(q0, std::min(nq, q0 + query_chunk));
      const auto qi = q.index({Slice(), Slice(), qs});
      const auto gi = grad_out.index({Slice(), Slice(), qs});
      const auto lse_i = lse.index({Slice(), Slice(), qs}).unsqueeze(-1);
      const auto delta_i = delta.index({Slice(), Slice(), qs});
      const auto xqi = xq.index({Slice(), qs});
      auto grad_qi = torch::zeros_like(qi);
      for (int64_t k0 = 0; k0 < nk; k0 += key_chunk) {
        const auto ks = Slice(k0, std::min(nk, k0 + key_chunk));
        const auto kj = k.index({Slice(), Slice(), ks});
        const auto vj = v.index({Slice(), Slice(), ks});
        const auto xkj = xk.index({Slice(), ks});
        Tensor logits;
        if (kept_logits.defined()) {
          logits = kept_logits.index({Slice(), Slice(), qs, ks}) - lse_i;
        } else {
          logits = torch::matmul(qi, kj.transpose(-1, -2)).mul_(scale);
          add_bias(logits, xqi, xkj, amplitudes, rates, time_features);
          logits.sub_(lse_i);
        }
        const auto p = logits.exp_();  // the chunk's attention weights
        grad_v.index({Slice(), Slice(), ks}).add_(torch::matmul(p.transpose(-1, -2), gi));
        const auto grad_logits = torch::matmul(gi, vj.transpose(-1, -2)).sub_(delta_i).mul_(p);
        grad_qi.add_(torch::matmul(grad_logits, kj), scale);
        grad_k.index({Slice(), Slice(), ks})
            .add_(torch::matmul(grad_logits.transpose(-1, -2), qi), scale);
        accumulate_bias_gradients(grad_logits, xqi, xkj, amplitudes, rates, time_features, grad_a,
                                  grad_rates);
      }
      grad_q.index({Slice(), Slice(), qs}).copy_(grad_qi);
    }
    return {grad_q,   grad_k,   grad_v,   Tensor(), Tensor(), grad_a, grad_rates * rates,
            Tensor(), Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

torch::Tensor biased_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& xq,
                               const torch::Tensor& xk, const torch::Tensor& amplitudes,
                               const torch::Tensor& log_rates, BiasedAttentionChunks chunks,
                               int64_t time_features) {
  // The logits, their RBF bias, the softmax and the weighted sum run in float32 (the bias
  // kernels read float32), also when the projections before came out of bf16 autocast.
  const AutocastOff float32_inside;
  if (q.scalar_type() != torch::kFloat32 || k.scalar_type() != torch::kFloat32 ||
      v.scalar_type() != torch::kFloat32) {
    return biased_attention(q.to(torch::kFloat32), k.to(torch::kFloat32), v.to(torch::kFloat32), xq,
                            xk, amplitudes, log_rates, chunks, time_features);
  }
  if (k.size(2) == 0)
    return torch::zeros({q.size(0), q.size(1), q.size(2), v.size(3)}, q.options());
  // Decided here: inside forward() autograd has switched gradient mode off.
  const bool for_backward = torch::GradMode::is_enabled() &&
                            (q.requires_grad() || k.requires_grad() || v.requires_grad() ||
                             amplitudes.requires_grad() || log_rates.requires_grad());
  return BiasedAttention::apply(q, k, v, xq, xk, amplitudes, log_rates, chunks.queries, chunks.keys,
                                for_backward, chunks.recompute_logits, time_features)[0];
}

torch::Tensor biased_attention_weights(const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& xq, const torch::Tensor& xk,
                                       const torch::Tensor& amplitudes,
                                       const torch::Tensor& log_rates, int64_t time_features) {
  const AutocastOff float32_inside;
  const double scale = 1.0 / std::sqrt(double(q.size(3)));
  auto logits =
      torch::matmul(q.to(torch::kFloat32), k.to(torch::kFloat32).transpose(2, 3)).mul_(scale);
  add_bias(logits, xq.to(torch::kFloat32), xk.to(torch::kFloat32), amplitudes, log_rates.exp(),
           time_features);
  return torch::softmax(logits, -1);
}

}  // namespace npe
