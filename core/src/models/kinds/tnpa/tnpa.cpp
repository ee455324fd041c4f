#include "models/kinds/tnpa/tnpa.h"

#include <cmath>
#include <string>

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/parameter_terms.h"
#include "models/tokens.h"

namespace npe {
namespace {

// The mask of Nguyen & Grover's Figure 2 for queries [context; targets; padded targets] over
// keys [context; targets]: true where a query may attend.
torch::Tensor autoregressive_mask(int64_t nc, int64_t nt, torch::Device device) {
  auto opts = torch::TensorOptions().dtype(torch::kBool).device(device);
  auto mask = torch::zeros({nc + 2 * nt, nc + nt}, opts);
  mask.narrow(1, 0, nc).fill_(true);  // everyone sees the context
  auto lower = torch::ones({nt, nt}, opts).tril();
  mask.narrow(0, nc, nt).narrow(1, nc, nt).copy_(lower);                // targets: j <= i
  mask.narrow(0, nc + nt, nt).narrow(1, nc, nt).copy_(lower.tril(-1));  // padded: j < i
  return mask;
}

}  // namespace

TnpaImpl::TnpaImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto& transformer = c.options<TransformerOptions>();
  m_embed = register_module("embed", token_embedder(c.dim_x + c.dim_y + 1, transformer.dim_model));
  for (int64_t l = 0; l < transformer.num_layers; ++l) {
    m_layers.push_back(register_module(
        "layer" + std::to_string(l),
        AttentionBlock(transformer.dim_model, transformer.num_heads, transformer.head_dim)));
  }
  m_head = register_module("head", GaussianHead(transformer.dim_model, transformer.dim_model,
                                                c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction TnpaImpl::forward_impl(const Task& task) {
  // With no earlier targets, every padded token sees the context only: the one-step predictive.
  auto [zc, zt] = input_output_tokens(m_embed, task);
  const auto nc = zc.size(1);
  auto z = torch::cat({zc, zt}, 1);
  for (auto& layer : m_layers) z = layer->forward(z, z.narrow(1, 0, nc));
  return m_head->forward(z.narrow(1, nc, z.size(1) - nc));
}

torch::Tensor TnpaImpl::ordered_log_likelihood(const Task& task) {
  const auto b = task.batch_size(), nc = task.num_context(), nt = task.num_targets();
  auto opts = task.xt.options();
  auto context =
      m_embed->forward(torch::cat({task.xc, task.yc, torch::ones({b, nc, 1}, opts)}, -1));
  auto targets =
      m_embed->forward(torch::cat({task.xt, task.yt, torch::ones({b, nt, 1}, opts)}, -1));
  auto padded =
      m_embed->forward(torch::cat({task.xt, torch::zeros({b, nt, task.dim_y() + 1}, opts)}, -1));
  auto z = torch::cat({context, targets, padded}, 1);
  const auto mask = autoregressive_mask(nc, nt, task.xt.device());
  for (auto& layer : m_layers) z = layer->forward(z, z.narrow(1, 0, nc + nt), nullptr, mask);
  auto prediction = m_head->forward(z.narrow(1, nc + nt, nt));
  return log_likelihood_per_task(prediction, task.yt) * double(nt);
}

torch::Tensor TnpaImpl::log_likelihood_impl(const Task& task) {
  const auto nt = task.num_targets();
  if (nt == 0) return torch::zeros({task.batch_size()}, task.xt.options());
  const auto orders = is_training() ? 1 : config().options<PermutationOptions>().num_permutations;
  if (orders == 1) return ordered_log_likelihood(task) / double(nt);
  // Eq. 7: the average of the likelihoods over random orders, as a log-mean-exp. The orders
  // are fixed (seeded) so that evaluations are reproducible.
  auto generator = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/0);
  std::vector<torch::Tensor> per_order;
  for (int64_t k = 0; k < orders; ++k) {
    auto order = torch::randperm(nt, generator, torch::kLong).to(task.xt.device());
    Task permuted{task.xc, task.yc, task.xt.index_select(1, order), task.yt.index_select(1, order)};
    per_order.push_back(ordered_log_likelihood(permuted));
  }
  auto stacked = torch::stack(per_order);
  return (torch::logsumexp(stacked, 0) - std::log(double(orders))) / double(nt);
}

torch::Tensor TnpaImpl::sample_impl(const Task& task, int64_t count, torch::Generator& generator) {
  const auto b = task.batch_size(), nt = task.num_targets(), dy = task.dim_y();
  auto opts = task.xt.options();
  // All samples run as one batch of count * B tasks.
  auto repeat = [&](const torch::Tensor& t) {
    return t.unsqueeze(0).expand({count, -1, -1, -1}).reshape({count * b, t.size(1), t.size(2)});
  };
  const auto xc = repeat(task.xc), yc = repeat(task.yc), xt = repeat(task.xt);
  const auto rows = count * b;
  // Targets are drawn in a random order, as in training, where target orders are random.
  auto order = torch::randperm(nt, generator, torch::kLong);
  // keys[l]: the inputs of layer l of the context and of the targets drawn so far. Causality
  // of the mask makes these final once computed, so each new target only adds its own rows.
  std::vector<torch::Tensor> keys;
  auto z = m_embed->forward(torch::cat({xc, yc, torch::ones({rows, xc.size(1), 1}, opts)}, -1));
  for (auto& layer : m_layers) {
    keys.push_back(z);
    z = layer->forward(z, z);
  }
  auto samples = torch::zeros({rows, nt, dy}, opts);
  for (int64_t step = 0; step < nt; ++step) {
    const auto i = order[step].item<int64_t>();
    auto x = xt.narrow(1, i, 1);
    auto p = m_embed->forward(torch::cat({x, torch::zeros({rows, 1, dy + 1}, opts)}, -1));
    for (size_t l = 0; l < m_layers.size(); ++l) p = m_layers[l]->forward(p, keys[l]);
    auto prediction = m_head->forward(p);
    auto noise =
        at::normal(0.0, 1.0, {rows, 1, dy}, generator, opts.device(torch::kCPU)).to(opts.device());
    auto y = prediction.mean + prediction.stddev * noise;
    samples.narrow(1, i, 1).copy_(y);
    if (step + 1 == nt) break;
    auto r = m_embed->forward(torch::cat({x, y, torch::ones({rows, 1, 1}, opts)}, -1));
    for (size_t l = 0; l < m_layers.size(); ++l) {
      keys[l] = torch::cat({keys[l], r}, 1);
      if (l + 1 < m_layers.size()) r = m_layers[l]->forward(r, keys[l]);
    }
  }
  return samples.view({count, b, nt, dy});
}

ModelSpec tnpa_spec() {
  ModelSpec spec;
  spec.info = {
      "tnpa",
      "TNP-A",
      "Nguyen & Grover's autoregressive TNP: targets predicted one at a time given the earlier "
      "ones (samples drawn target by target).",
      false,
      false,
      false,
      true,
      2,
      true};
  spec.make_options = options_of<TnpaOptions>;
  spec.make = make_model_of<TnpaImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    return tnpd_encoder(c) + head(c);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const auto& transformer = c.options<TransformerOptions>();
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dx = double(c.dim_x), dy = double(c.dim_y),
                 layers = double(transformer.num_layers);
    // The teacher-forced pass: context, targets and padded targets over context and targets.
    return embedder(c, nc + 2 * nt, dx + dy + 1) + layers * block(c, nc + 2 * nt, nc + nt) +
           head(c, nt, double(transformer.dim_model));
  };
  return spec;
}

}  // namespace npe
