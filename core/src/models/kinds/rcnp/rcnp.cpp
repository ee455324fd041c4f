#include "models/kinds/rcnp/rcnp.h"

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/parameter_terms.h"

namespace npe {
namespace {
constexpr int64_t kPairwiseElementBudget = int64_t{1} << 23;
}

RcnpImpl::RcnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto dz = c.options<TokenOptions>().dim_model;
  m_first_x = register_module("first_x",
                              torch::nn::Linear(torch::nn::LinearOptions(c.dim_x, dz).bias(false)));
  m_first_y = register_module("first_y", torch::nn::Linear(c.dim_y, dz));
  m_phi_rest = register_module("phi_rest", Mlp(dz, std::vector<int64_t>(4, dz), dz));
  m_head = register_module("head", GaussianHead(dz, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

torch::Tensor RcnpImpl::encode(const torch::Tensor& xt, const torch::Tensor& context_part) {
  auto first = m_first_x->forward(xt).unsqueeze(2) + context_part.unsqueeze(1);  // [B,Nt,Nc,Dz]
  return m_phi_rest->forward(torch::relu(first)).mean(2);
}

Prediction RcnpImpl::forward_impl(const Task& task) {
  const auto b = task.batch_size(), nt = task.num_targets(), nc = task.num_context();
  const auto dz = config().options<TokenOptions>().dim_model;
  if (nc == 0) {
    return m_head->forward(torch::zeros({b, nt, dz}, task.xt.options()));
  }
  auto context_part = m_first_y->forward(task.yc) - m_first_x->forward(task.xc);  // [B,Nc,Dz]
  const int64_t per_target = b * nc * dz;
  if (torch::GradMode::is_enabled() || nt * per_target <= kPairwiseElementBudget) {
    return m_head->forward(encode(task.xt, context_part));
  }
  // Targets are independent: chunk them to bound the pairwise tensor at inference.
  const int64_t chunk = std::max<int64_t>(1, kPairwiseElementBudget / per_target);
  std::vector<Prediction> parts;
  for (int64_t start = 0; start < nt; start += chunk) {
    using torch::indexing::Slice;
    auto xt = task.xt.index({Slice(), Slice(start, std::min(nt, start + chunk))});
    parts.push_back(m_head->forward(encode(xt, context_part)));
  }
  return concat_targets(parts);
}

ModelSpec rcnp_spec() {
  ModelSpec spec;
  spec.info = {"rcnp", "RCNP",
               "Relational CNP: encodes each context point relative to the target (x - xc).", true};
  spec.make_options = options_of<RcnpOptions>;
  spec.make = make_model_of<RcnpImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    const double dz = double(c.options<TokenOptions>().dim_model);
    return linear(double(c.dim_x), dz, false) + linear(double(c.dim_y), dz) +
           mlp(dz, std::vector<double>(4, dz), dz) + gaussian_head(c, dz, dz);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dz = double(c.options<TokenOptions>().dim_model), dx = double(c.dim_x),
                 dy = double(c.dim_y);
    return linear(nt + nc, dx, dz) + linear(nc, dy, dz) +
           mlp(nt * nc, dz, std::vector<double>(4, dz), dz) + head(c, nt, dz);
  };
  return spec;
}

}  // namespace npe
