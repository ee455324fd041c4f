#include "models/kinds/cnp/cnp.h"

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/parameter_terms.h"

namespace npe {

CnpImpl::CnpImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto dz = c.options<TokenOptions>().dim_model;
  m_encoder = register_module("encoder", Mlp(c.dim_x + c.dim_y, std::vector<int64_t>(5, dz), dz));
  m_head = register_module(
      "head", GaussianHead(dz + c.dim_x, dz, c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction CnpImpl::forward_impl(const Task& task) {
  const auto b = task.batch_size(), nt = task.num_targets();
  torch::Tensor r;
  if (task.num_context() == 0) {
    r = torch::zeros({b, config().options<TokenOptions>().dim_model}, task.xt.options());
  } else {
    r = m_encoder->forward(torch::cat({task.xc, task.yc}, -1)).mean(1);
  }
  auto rt = r.unsqueeze(1).expand({b, nt, r.size(-1)});
  return m_head->forward(torch::cat({rt, task.xt}, -1));
}

ModelSpec cnp_spec() {
  ModelSpec spec;
  spec.info = {"cnp", "CNP", "Conditional NP: an MLP encodes each (x, y), the codes are averaged."};
  spec.make_options = options_of<CnpOptions>;
  spec.make = make_model_of<CnpImpl>;
  spec.parameter_count = [](const ModelConfig& c) {
    using namespace parameter_terms;
    const double dz = double(c.options<TokenOptions>().dim_model);
    // The head reads the representation beside each target's x.
    return mlp(double(c.dim_x + c.dim_y), std::vector<double>(5, dz), dz) +
           gaussian_head(c, dz + double(c.dim_x), dz);
  };
  spec.flops_per_task = [](const ModelConfig& c, const BatchShape& s) {
    using namespace flop_terms;
    const double nc = double(s.num_context), nt = double(s.num_targets);
    const double dz = double(c.options<TokenOptions>().dim_model), dx = double(c.dim_x),
                 dy = double(c.dim_y);
    return mlp(nc, dx + dy, std::vector<double>(5, dz), dz) + head(c, nt, dz + dx);
  };
  return spec;
}

}  // namespace npe
