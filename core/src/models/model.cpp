#include "npe/models/model.h"

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/models/model_registry.h"

namespace npe {

namespace {

void check_dimensions(const ModelConfig& config, const Task& task) {
  if (task.dim_x() != config.dim_x || task.dim_y() != config.dim_y) {
    throw InvalidInputError(model_info(config.kind).display_name +
                            " was built for D_x = " + std::to_string(config.dim_x) +
                            ", D_y = " + std::to_string(config.dim_y) +
                            " but the task has D_x = " + std::to_string(task.dim_x()) +
                            ", D_y = " + std::to_string(task.dim_y()));
  }
}

// A task's outputs centred on its own context's mean (ModelConfig::centre_per_task), and the
// way back. Computed in float64.
struct ContextCentre {
  torch::Tensor mean;  // [B,1,Dy], float64

  static ContextCentre of(const Task& task) {
    const auto b = task.batch_size(), dy = task.dim_y();
    if (task.num_context() == 0) {
      return {torch::zeros({b, 1, dy}, task.xt.options().dtype(torch::kFloat64))};
    }
    return {task.yc.to(torch::kFloat64).mean(1, /*keepdim=*/true)};
  }
  torch::Tensor centred(const torch::Tensor& y) const {
    return y.defined() ? (y.to(torch::kFloat64) - mean).to(y.scalar_type()) : y;
  }
  Task apply(const Task& task) const {
    return {task.xc, centred(task.yc), task.xt, centred(task.yt)};
  }
  torch::Tensor moved_back(const torch::Tensor& y) const {  // [..., B, Nt, Dy]
    return (y.to(torch::kFloat64) + mean).to(y.scalar_type());
  }
  Prediction moved_back(const Prediction& p) const { return {moved_back(p.mean), p.stddev}; }
};

}  // namespace

Prediction NeuralProcessImpl::predict(const Task& task) {
  validate_task(task);
  check_dimensions(m_config, task);
  if (!m_config.centre_per_task) return forward_impl(model_inputs(task));
  const auto centre = ContextCentre::of(task);
  return centre.moved_back(forward_impl(model_inputs(centre.apply(task))));
}

torch::Tensor NeuralProcessImpl::log_likelihood(const Task& task) {
  validate_task(task, /*require_target_outputs=*/true);
  check_dimensions(m_config, task);
  if (!m_config.centre_per_task) return log_likelihood_impl(model_inputs(task));
  // A shift of both the outputs and the prediction leaves the density as it was.
  return log_likelihood_impl(model_inputs(ContextCentre::of(task).apply(task)));
}

torch::Tensor NeuralProcessImpl::sample(const Task& task, int64_t count,
                                        torch::Generator generator) {
  validate_task(task);
  check_dimensions(m_config, task);
  if (count < 1) throw InvalidInputError("the number of samples must be >= 1");
  if (!model_info(m_config.kind).joint) {
    throw ConfigError(model_info(m_config.kind).display_name +
                      " predicts each target independently: it cannot draw coherent samples");
  }
  if (!m_config.centre_per_task) return sample_impl(model_inputs(task), count, generator);
  const auto centre = ContextCentre::of(task);
  return centre.moved_back(sample_impl(model_inputs(centre.apply(task)), count, generator));
}

std::optional<JointGaussian> NeuralProcessImpl::joint_predictive(const Task& task) {
  validate_task(task);
  check_dimensions(m_config, task);
  if (!m_config.centre_per_task) return joint_impl(model_inputs(task));
  const auto centre = ContextCentre::of(task);
  auto joint = joint_impl(model_inputs(centre.apply(task)));
  if (joint) joint->mean = centre.moved_back(joint->mean);
  return joint;
}

torch::Tensor NeuralProcessImpl::log_likelihood_impl(const Task& task) {
  if (auto joint = joint_impl(task)) return joint->log_likelihood(task.yt);
  return log_likelihood_per_task(forward_impl(task), task.yt);
}

torch::Tensor NeuralProcessImpl::sample_impl(const Task& task, int64_t count,
                                             torch::Generator& generator) {
  auto joint = joint_impl(task);
  if (!joint) {
    throw ConfigError(model_info(m_config.kind).display_name + " has no joint predictive");
  }
  return joint->sample(count, generator);
}

Task NeuralProcessImpl::model_inputs(const Task& task) const {
  // Copies even where the task is float64 already: the coordinates are changed in place below,
  // and the caller's task (one scene predicted by several models in turn, the candidates of a
  // placement) must stay as it was.
  auto xc = task.xc.to(torch::kFloat64, /*non_blocking=*/false, /*copy=*/true);
  auto xt = task.xt.to(torch::kFloat64, /*non_blocking=*/false, /*copy=*/true);
  // Place features (the trailing inputs) are neither moved to the reference nor scaled.
  const auto dc = m_config.dim_coordinates();
  auto coordinates = [dc](const torch::Tensor& x) { return x.narrow(-1, 0, dc); };
  if (model_info(m_config.kind).translation_equivariant) {
    // Equivariance makes the origin free: measuring inputs from a point of the data keeps them
    // small, so float32 holds every digit that matters even at |Δ| = 1e6. The reference is a
    // whole number so that grid-based models keep their grid alignment.
    torch::Tensor reference;
    if (task.num_context() > 0) {
      reference = coordinates(xc).mean(1, true).round();
    } else if (task.num_targets() > 0) {
      reference = coordinates(xt).mean(1, true).round();
    }
    if (reference.defined()) {
      coordinates(xc) -= reference;
      coordinates(xt) -= reference;
    }
  }
  if (m_config.input_scale != 1.0) {
    coordinates(xc) *= m_config.input_scale;
    coordinates(xt) *= m_config.input_scale;
  }
  const auto dtype = parameter_dtype();
  auto cast = [&](const torch::Tensor& t) { return t.defined() ? t.to(dtype) : t; };
  return {cast(xc), cast(task.yc), cast(xt), cast(task.yt)};
}

torch::ScalarType NeuralProcessImpl::parameter_dtype() const {
  const auto params = parameters();
  return params.empty() ? torch::kFloat32 : params.front().scalar_type();
}

torch::Tensor NeuralProcessImpl::target_attention(const Task& task) {
  m_record_attention = true;
  m_last_attention = torch::Tensor();
  try {
    predict(task);
  } catch (...) {
    m_record_attention = false;
    throw;
  }
  m_record_attention = false;
  auto weights = m_last_attention;
  m_last_attention = torch::Tensor();
  return weights.defined() ? weights.sum(1) : weights;
}

}  // namespace npe
