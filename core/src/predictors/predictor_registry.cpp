#include "npe/predictors/predictor_registry.h"
#include "npe/ground/gp_posterior.h"

#include <algorithm>
#include <functional>
#include <map>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "npe/data/gp_tasks.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "npe/predictors/torchscript_predictor.h"

namespace npe {
namespace {

Prediction to_cpu(const Prediction& p) {
  return {p.mean.to(torch::kCPU, torch::kFloat32), p.stddev.to(torch::kCPU, torch::kFloat32)};
}

torch::Generator cpu_generator(uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

torch::Tensor joint_samples(const JointGaussian& joint, int64_t count, uint64_t seed) {
  if (count < 1) throw InvalidInputError("the number of samples must be >= 1");
  return joint.sample(count, cpu_generator(seed)).to(torch::kCPU, torch::kFloat32);
}

torch::Tensor joint_log_likelihood_of(const JointGaussian& joint, const Task& task) {
  return joint.log_likelihood(task.yt.to(joint.mean.device())).to(torch::kCPU, torch::kFloat64);
}

class NeuralPredictor final : public Predictor {
 public:
  NeuralPredictor(PredictorInfo info, std::shared_ptr<NeuralProcessImpl> model,
                  torch::Device device)
      : Predictor(std::move(info)), m_model(std::move(model)), m_device(device) {}

  Prediction predict(const TaskBatch& batch) override {
    torch::NoGradGuard no_grad;
    m_model->eval();
    return to_cpu(m_model->predict(batch.task.to(m_device)));
  }
  torch::Tensor target_attention(const Task& task) override {
    torch::NoGradGuard no_grad;
    m_model->eval();
    auto weights = m_model->target_attention(task.to(m_device));
    return weights.defined() ? weights.cpu() : weights;
  }
  torch::Tensor joint_log_likelihood(const TaskBatch& batch) override {
    torch::NoGradGuard no_grad;
    m_model->eval();
    return m_model->log_likelihood(batch.task.to(m_device)).to(torch::kCPU, torch::kFloat64);
  }
  torch::Tensor sample(const TaskBatch& batch, int64_t count, uint64_t seed) override {
    torch::NoGradGuard no_grad;
    m_model->eval();
    return m_model->sample(batch.task.to(m_device), count, cpu_generator(seed))
        .to(torch::kCPU, torch::kFloat32);
  }
  torch::Tensor predictive_covariance(const TaskBatch& batch) override {
    torch::NoGradGuard no_grad;
    m_model->eval();
    auto joint = m_model->joint_predictive(batch.task.to(m_device));
    return joint ? joint->covariance().cpu() : torch::Tensor();
  }
  std::shared_ptr<NeuralProcessImpl> neural_model() const override { return m_model; }

 private:
  std::shared_ptr<NeuralProcessImpl> m_model;
  torch::Device m_device;
};

// GP baselines solve Nc x Nc systems: beyond the cap they report instead of computing for
// minutes.
void check_gp_context(const PredictorInfo& info, const Task& task, int64_t max_context) {
  if (max_context > 0 && task.num_context() > max_context) {
    throw ResourceLimitError(info.display_name + " is limited to " + std::to_string(max_context) +
                             " context points here (" + std::to_string(task.num_context()) +
                             " given): its cost grows as the cube of the context size");
  }
}

// Work of one exact GP posterior per task: the context covariance's Cholesky factor (Nc^3/3),
// the solves for the targets' means and variances (Nc^2 Nt each way) and the kernel matrices
// (about ten operations per pair and input dimension).
double gp_posterior_flops(const BatchShape& s, int64_t dim_x) {
  const double nc = double(s.num_context), nt = double(s.num_targets);
  const double kernels = 10.0 * double(std::max<int64_t>(dim_x, 1)) * (nc * nc + nc * nt);
  return double(s.batch) * (nc * nc * nc / 3.0 + 2.0 * nc * nc * nt + kernels);
}

// The GP baselines' joint outputs, all from their joint posterior (joint()).
class GpPredictor : public Predictor {
 public:
  GpPredictor(PredictorInfo info, int64_t max_context)
      : Predictor(std::move(info)), m_max_context(max_context) {}
  int64_t max_context() const override { return m_max_context; }
  torch::Tensor joint_log_likelihood(const TaskBatch& batch) override {
    validate_task(batch.task, /*require_target_outputs=*/true);
    return joint_log_likelihood_of(joint(batch), batch.task);
  }
  torch::Tensor sample(const TaskBatch& batch, int64_t count, uint64_t seed) override {
    return joint_samples(joint(batch), count, seed);
  }
  torch::Tensor predictive_covariance(const TaskBatch& batch) override {
    return joint(batch).covariance().cpu();
  }

 protected:
  virtual JointGaussian joint(const TaskBatch& batch) = 0;
  void check_context(const Task& task) const { check_gp_context(info(), task, m_max_context); }

 private:
  int64_t m_max_context;
};

class OraclePredictor final : public GpPredictor {
 public:
  using GpPredictor::GpPredictor;
  double prediction_flops(const BatchShape& shape) const override {
    return gp_posterior_flops(shape, 1);
  }
  Prediction predict(const TaskBatch& batch) override {
    return to_cpu(oracle_of(batch).predict(batch.task));
  }

 private:
  const TaskOracle& oracle_of(const TaskBatch& batch) const {
    check_context(batch.task);
    if (!batch.has_oracle()) {
      throw ConfigError(
          "the GP oracle needs tasks whose generating process is known (GP tasks, or the "
          "explorer's ground truth)");
    }
    return *batch.oracle;
  }
  JointGaussian joint(const TaskBatch& batch) override {
    auto joint = oracle_of(batch).predict_joint(batch.task);
    if (!joint) throw ConfigError("this task's oracle has no joint predictive");
    return *joint;
  }
};

// The context of the last batch a baseline computed for: the fitted GPs and gp-bayes do their
// per-task work from the context alone, so the outputs an evaluation asks for in turn
// (marginals, then joint log-likelihoods) reuse it.
class LastContext {
 public:
  bool is(const Task& task) const {
    return m_xc.defined() && m_xc.sizes() == task.xc.sizes() && m_yc.sizes() == task.yc.sizes() &&
           torch::equal(m_xc, task.xc.cpu()) && torch::equal(m_yc, task.yc.cpu());
  }
  void remember(const Task& task) {
    m_xc = task.xc.cpu().clone();
    m_yc = task.yc.cpu().clone();
  }

 private:
  torch::Tensor m_xc, m_yc;
};

class FittedGpPredictor final : public GpPredictor {
 public:
  FittedGpPredictor(PredictorInfo info, FittedGpOptions options, int64_t max_context)
      : GpPredictor(std::move(info), max_context), m_options(std::move(options)) {}
  // Each Adam iteration of each kernel family factorises the context covariance and
  // differentiates through it (about three factorisations' work); the periodic family first
  // scores its grid of periods (one factorisation each); then one posterior.
  double prediction_flops(const BatchShape& shape) const override {
    const double nc = double(shape.num_context), cube = nc * nc * nc;
    const double families = m_options.ard ? 1.0 : double(m_options.kernels.size());
    const double period_grid = m_options.ard ? 0.0 : double(m_options.period_grid);
    return double(shape.batch) *
               (families * double(m_options.iterations) * cube + period_grid * cube / 3.0) +
           gp_posterior_flops(shape, 1);
  }
  Prediction predict(const TaskBatch& batch) override {
    check_context(batch.task);
    const auto& fitted = fit(batch.task);
    std::vector<torch::Tensor> means, stddevs;
    for (int64_t b = 0; b < batch.task.batch_size(); ++b) {
      auto p = gp_posterior_predictive(fitted.kernels[b], fitted.noise_std[b], batch.task.xc[b],
                                       batch.task.yc[b], batch.task.xt[b]);
      means.push_back(p.mean);
      stddevs.push_back(p.stddev);
    }
    return to_cpu({torch::stack(means), torch::stack(stddevs)});
  }

 private:
  JointGaussian joint(const TaskBatch& batch) override {
    check_context(batch.task);
    const auto& fitted = fit(batch.task);
    return gp_joint_predictive(batch.task, fitted.kernels, fitted.noise_std);
  }
  // The fit depends on the context only: the marginal and the joint predictive of one task (as
  // an evaluation asks for both) share it.
  const FittedGp& fit(const Task& task) {
    if (!m_fitted_context.is(task)) {
      m_fitted = fit_gp(task, m_options);
      m_fitted_context.remember(task);
    }
    return m_fitted;
  }

  FittedGpOptions m_options;
  FittedGp m_fitted;
  LastContext m_fitted_context;
};

// The Bayes-optimal predictor under the tasks' prior: predict() is the mixture's moment-matched
// Gaussian (the ceiling for Gaussian marginals), exact_marginal_log_likelihood() the mixture's
// own, joint_log_likelihood() the mixture of joint Gaussians.
class BayesGpPredictor final : public Predictor {
 public:
  BayesGpPredictor(PredictorInfo info, const PredictorOptions& o)
      : Predictor(std::move(info)),
        m_hypotheses(gp_prior_hypotheses(o.gp_prior, o.gp_bayes)),
        m_max_context(o.gp_max_context) {}
  Prediction predict(const TaskBatch& batch) override {
    return to_cpu(gp_bayes_predict(posteriors(batch.task), batch.task));
  }
  int64_t max_context() const override { return m_max_context; }
  // One exact posterior per hypothesis of the prior's grid (refinement adds a few).
  double prediction_flops(const BatchShape& shape) const override {
    return double(m_hypotheses.kernels.size()) * gp_posterior_flops(shape, 1);
  }
  torch::Tensor exact_marginal_log_likelihood(const TaskBatch& batch) override {
    validate_task(batch.task, /*require_target_outputs=*/true);
    return gp_bayes_marginal_log_likelihood(posteriors(batch.task), batch.task);
  }
  torch::Tensor joint_log_likelihood(const TaskBatch& batch) override {
    validate_task(batch.task, /*require_target_outputs=*/true);
    return gp_bayes_joint_log_likelihood(posteriors(batch.task), batch.task);
  }
  torch::Tensor sample(const TaskBatch& batch, int64_t count, uint64_t seed) override {
    return gp_bayes_sample(posteriors(batch.task), batch.task, count, cpu_generator(seed))
        .to(torch::kFloat32);
  }
  torch::Tensor predictive_covariance(const TaskBatch& batch) override {
    return gp_bayes_covariance(posteriors(batch.task), batch.task);
  }
  std::vector<KernelPosterior> kernel_posteriors(const TaskBatch& batch) override {
    std::vector<KernelPosterior> out;
    for (const auto& p : posteriors(batch.task)) {
      out.push_back(gp_bayes_kernel_posterior(p, m_hypotheses.prior));
    }
    return out;
  }

 private:
  // One refinement per task serves the marginals, the mixture and the joint log-likelihoods.
  const std::vector<GpBayesPosterior>& posteriors(const Task& task) {
    validate_task(task);
    check_gp_context(info(), task, m_max_context);
    if (!m_context.is(task)) {
      m_posteriors = gp_bayes_posteriors(m_hypotheses, task);
      m_context.remember(task);
    }
    return m_posteriors;
  }
  GpHypotheses m_hypotheses;
  int64_t m_max_context;
  std::vector<GpBayesPosterior> m_posteriors;
  LastContext m_context;
};

PredictorInfo neural_info(const ModelInfo& m) {
  PredictorCapabilities caps;
  caps.translation_equivariant = m.translation_equivariant;
  caps.attention = m.attention;
  caps.on_grid = m.on_grid;
  caps.trainable = true;
  caps.flop_model = m.flop_model;
  caps.joint = m.joint;
  caps.size_presets = model_sizes();
  return {m.kind, m.display_name, m.description, caps};
}

std::vector<PredictorInfo> baseline_infos() {
  PredictorCapabilities equivariant;
  equivariant.translation_equivariant = true;
  equivariant.joint = true;
  auto oracle = equivariant;
  oracle.needs_oracle = true;
  auto bayes = equivariant;
  bayes.needs_gp_prior = true;
  auto fitted_1d = equivariant;
  fitted_1d.default_max_dim_x = 1;
  auto fitted_any = equivariant;
  fitted_any.default_min_dim_x = 2;
  return {
      {"gp-oracle", "GP (true kernel)",
       "Exact GP posterior under the process that generated the data: the best any model can do.",
       oracle},
      {"gp-bayes", "GP (Bayes over kernels)",
       "What an ideal neural process would predict: the GP posterior averaged over every kernel "
       "family and lengthscale of the training prior, weighted by how well each explains the "
       "context (the oracle, by contrast, is told the true kernel).",
       bayes},
      {"gp-fitted", "GP (fitted)",
       "GP whose kernel family (SE, periodic, Matérn-5/2) and hyperparameters are fitted to the "
       "context by maximising the marginal likelihood.",
       fitted_1d},
      {"gp-se-ard", "GP (SE-ARD)",
       "GP with a squared-exponential kernel, one lengthscale per input dimension, fitted per "
       "task (any D_x).",
       fitted_any},
  };
}

using Factory =
    std::function<std::unique_ptr<Predictor>(const PredictorInfo&, const PredictorOptions&)>;

std::unique_ptr<Predictor> make_neural(const PredictorInfo& info, const PredictorOptions& o) {
  if (o.untrained) {
    GpTaskGenerator gp1d;
    const TaskSource& task = o.task ? *o.task : gp1d;
    torch::NoGradGuard no_grad;
    auto model = make_model(default_model_config(info.name, o.size, task));
    model->to(o.device);
    model->eval();
    return std::make_unique<NeuralPredictor>(info, std::move(model), o.device);
  }
  if (o.checkpoint.empty()) {
    throw ConfigError("'" + info.name + "' is a neural model: give a checkpoint to load");
  }
  auto loaded = load_checkpoint(o.checkpoint, o.device);
  if (loaded.metadata.model.kind != info.name) {
    throw ConfigError("'" + o.checkpoint.string() + "' holds a " + loaded.metadata.model.kind +
                      " model, not " + info.name);
  }
  return std::make_unique<NeuralPredictor>(info, loaded.model, o.device);
}

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = [] {
    std::map<std::string, Factory> t;
    t["gp-oracle"] = [](const PredictorInfo& info, const PredictorOptions& o) {
      return std::make_unique<OraclePredictor>(info, o.gp_max_context);
    };
    t["gp-bayes"] = [](const PredictorInfo& info, const PredictorOptions& o) {
      return std::make_unique<BayesGpPredictor>(info, o);
    };
    t["gp-fitted"] = [](const PredictorInfo& info, const PredictorOptions& o) {
      auto options = o.fitted;
      options.ard = false;
      return std::make_unique<FittedGpPredictor>(info, options, o.gp_max_context);
    };
    t["gp-se-ard"] = [](const PredictorInfo& info, const PredictorOptions& o) {
      auto options = o.fitted;
      options.ard = true;
      return std::make_unique<FittedGpPredictor>(info, options, o.gp_max_context);
    };
    for (const auto& m : model_infos()) t[m.kind] = make_neural;
    return t;
  }();
  return table;
}

}  // namespace

const std::vector<PredictorInfo>& predictor_infos() {
  static const std::vector<PredictorInfo> infos = [] {
    auto all = baseline_infos();
    for (const auto& m : model_infos()) all.push_back(neural_info(m));
    return all;
  }();
  return infos;
}

const PredictorInfo& predictor_info(const std::string& name) {
  for (const auto& info : predictor_infos()) {
    if (info.name == name) return info;
  }
  std::string known;
  for (const auto& info : predictor_infos()) known += (known.empty() ? "" : ", ") + info.name;
  throw ConfigError("unknown model '" + name + "' (known: " + known + ")");
}

std::unique_ptr<Predictor> make_predictor(const std::string& name,
                                          const PredictorOptions& options) {
  const auto& info = predictor_info(name);
  return factories().at(name)(info, options);
}

std::unique_ptr<Predictor> load_predictor(const std::filesystem::path& checkpoint,
                                          torch::Device device) {
  if (is_torchscript_model(checkpoint)) return load_torchscript_predictor(checkpoint, device);
  auto loaded = load_checkpoint(checkpoint, device);
  return std::make_unique<NeuralPredictor>(neural_info(model_info(loaded.metadata.model.kind)),
                                           loaded.model, device);
}

CheckpointMetadata read_model_metadata(const std::filesystem::path& path) {
  if (is_torchscript_model(path)) return read_torchscript_model(path).metadata();
  return read_checkpoint_metadata(path);
}

std::unique_ptr<Predictor> wrap_model(std::shared_ptr<NeuralProcessImpl> model,
                                      torch::Device device) {
  auto info = neural_info(model_info(model->config().kind));
  return std::make_unique<NeuralPredictor>(std::move(info), std::move(model), device);
}

}  // namespace npe
