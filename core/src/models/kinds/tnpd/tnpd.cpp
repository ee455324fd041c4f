#include "models/kinds/tnpd/tnpd.h"

#include <torch/torch.h>

#include "models/flop_terms.h"
#include "models/parameter_terms.h"

namespace npe {

TnpdImpl::TnpdImpl(const ModelConfig& c) : NeuralProcessImpl(c) {
  const auto& transformer = c.options<TransformerOptions>();
  m_encoder = std::make_unique<TnpdEncoder>(*this, c);
  m_head = register_module("head", GaussianHead(transformer.dim_model, transformer.dim_model,
                                                c.dim_y, c.heteroscedastic, c.min_stddev));
}

Prediction TnpdImpl::forward_impl(const Task& task) {
  return m_head->forward(m_encoder->encode(task));
}

ModelSpec tnpd_spec() {
  ModelSpec spec;
  spec.info = {
      "tnpd",
      "TNP-D",
      "Nguyen & Grover's TNP-D: one masked transformer stack over context and target tokens; "
      "targets independent.",
      false,
      false,
      false,
      true,
      2};
  spec.make_options = options_of<TnpdOptions>;
  spec.make = make_model_of<TnpdImpl>;
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
    return embedder(c, nc + nt, dx + dy + 1) + layers * block(c, nc + nt, nc) +
           head(c, nt, double(transformer.dim_model));
  };
  return spec;
}

}  // namespace npe
