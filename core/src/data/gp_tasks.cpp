#include "npe/data/gp_tasks.h"

#include <cmath>
#include <random>

#include <torch/torch.h>

#include "npe/data/gp_oracle.h"
#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/linalg.h"

namespace npe {
namespace {

// Fills a [rows, cols] float64 tensor with U(low, high) draws from the shared engine.
torch::Tensor uniform(std::mt19937_64& engine, int64_t rows, int64_t cols, double low,
                      double high) {
  std::uniform_real_distribution<double> dist(low, high);
  auto t = torch::empty({rows, cols}, torch::kFloat64);
  auto* data = t.data_ptr<double>();
  for (int64_t i = 0; i < rows * cols; ++i) data[i] = dist(engine);
  return t;
}

torch::Tensor standard_normal(std::mt19937_64& engine, int64_t rows, int64_t cols) {
  std::normal_distribution<double> dist(0.0, 1.0);
  auto t = torch::empty({rows, cols}, torch::kFloat64);
  auto* data = t.data_ptr<double>();
  for (int64_t i = 0; i < rows * cols; ++i) data[i] = dist(engine);
  return t;
}

}  // namespace

nlohmann::json GpTaskConfig::to_json() const {
  std::vector<std::string> names;
  for (auto k : kernels) names.push_back(kernel_name(k));
  return {{"kind", "gp1d"},
          {"kernels", names},
          {"min_lengthscale", min_lengthscale},
          {"max_lengthscale", max_lengthscale},
          {"signal_variance", signal_variance},
          {"noise_std", noise_std},
          {"min_num_context", min_num_context},
          {"max_num_context", max_num_context},
          {"num_targets", num_targets},
          {"context_low", context_low},
          {"context_high", context_high},
          {"target_low", target_low},
          {"target_high", target_high},
          {"dim_x", dim_x},
          {"dim_y", dim_y}};
}

constexpr const char* kWhat = "task configuration";

GpTaskConfig GpTaskConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw ConfigError("task configuration must be a JSON object");
  GpTaskConfig c;
  if (json.contains("kernels")) {
    c.kernels.clear();
    std::vector<std::string> names;
    read_json_field(json, "kernels", names, kWhat);
    for (const auto& name : names) {
      c.kernels.push_back(kernel_kind_from_name(name));
    }
  }
  read_json_field(json, "min_lengthscale", c.min_lengthscale, kWhat);
  read_json_field(json, "max_lengthscale", c.max_lengthscale, kWhat);
  read_json_field(json, "signal_variance", c.signal_variance, kWhat);
  read_json_field(json, "noise_std", c.noise_std, kWhat);
  read_json_field(json, "min_num_context", c.min_num_context, kWhat);
  read_json_field(json, "max_num_context", c.max_num_context, kWhat);
  read_json_field(json, "num_targets", c.num_targets, kWhat);
  read_json_field(json, "context_low", c.context_low, kWhat);
  read_json_field(json, "context_high", c.context_high, kWhat);
  read_json_field(json, "target_low", c.target_low, kWhat);
  read_json_field(json, "target_high", c.target_high, kWhat);
  read_json_field(json, "dim_x", c.dim_x, kWhat);
  read_json_field(json, "dim_y", c.dim_y, kWhat);
  c.validate();
  return c;
}

void GpTaskConfig::validate() const {
  auto fail = [](const std::string& m) { throw ConfigError("GP task configuration: " + m); };
  if (kernels.empty()) fail("at least one kernel is required");
  if (!(min_lengthscale > 0.0 && max_lengthscale >= min_lengthscale))
    fail("lengthscale range must satisfy 0 < min <= max");
  if (!(signal_variance > 0.0)) fail("signal variance must be positive");
  if (!(noise_std >= 0.0)) fail("noise must be >= 0");
  if (min_num_context < 0 || max_num_context < min_num_context)
    fail("context count range must satisfy 0 <= min <= max");
  if (num_targets < 0) fail("number of targets must be >= 0");
  if (!(context_high > context_low) || !(target_high > target_low))
    fail("input ranges must have high > low");
  if (dim_x < 1 || dim_y < 1) fail("D_x and D_y must be >= 1");
}

GpTaskGenerator::GpTaskGenerator(GpTaskConfig config) : m_config(std::move(config)) {
  m_config.validate();
}

TaskBatch GpTaskGenerator::sample(int64_t batch_size, uint64_t seed, const Translation& tau,
                                  Split /*split*/) const {
  if (batch_size < 1) throw ConfigError("batch size must be >= 1");
  const auto shift = translation_tensor(tau, m_config.dim_x);  // validates tau
  const auto& c = m_config;
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int64_t> nc_dist(c.min_num_context, c.max_num_context);
  const int64_t nc = nc_dist(engine);
  const int64_t nt = c.num_targets;
  const int64_t n = nc + nt;
  std::uniform_int_distribution<size_t> kernel_dist(0, c.kernels.size() - 1);
  std::uniform_real_distribution<double> log_ls_dist(std::log(c.min_lengthscale),
                                                     std::log(c.max_lengthscale));
  TaskBatch batch;
  std::vector<KernelSpec> kernels;
  std::vector<torch::Tensor> xs, ys;
  for (int64_t b = 0; b < batch_size; ++b) {
    const auto kind = c.kernels[kernel_dist(engine)];
    const auto spec = paper_kernel(kind, std::exp(log_ls_dist(engine)), c.signal_variance);
    auto xc = uniform(engine, nc, c.dim_x, c.context_low, c.context_high);
    auto xt = uniform(engine, nt, c.dim_x, c.target_low, c.target_high);
    auto x = torch::cat({xc, xt}, 0);
    auto eps_f = standard_normal(engine, n, c.dim_y);
    auto eps_y = standard_normal(engine, n, c.dim_y);
    // Jitter starts at 1e-6 of the signal variance (the draws every shipped figure is based on).
    auto chol = jittered_cholesky(kernel_matrix(spec, x, x), JitterOptions{1e-6, 1e-1, true});
    auto y = chol.matmul(eps_f) + c.noise_std * eps_y;
    xs.push_back(x);
    ys.push_back(y);
    kernels.push_back(spec);
  }
  batch.oracle = std::make_shared<GpOracle>(std::move(kernels), c.noise_std);
  // The shift is applied after all draws, so tasks at every shift are the same draws translated.
  auto x = torch::stack(xs) + shift;  // [B,N,Dx] + [Dx]
  auto y = torch::stack(ys);
  using torch::indexing::Slice;
  // Kept in float64: a model converts to its own precision after moving to coordinates it can
  // represent (see NeuralProcessImpl::model_inputs), so Δ = 1e6 loses nothing here.
  batch.task.xc = x.index({Slice(), Slice(0, nc)}).contiguous();
  batch.task.yc = y.index({Slice(), Slice(0, nc)}).contiguous();
  batch.task.xt = x.index({Slice(), Slice(nc, n)}).contiguous();
  batch.task.yt = y.index({Slice(), Slice(nc, n)}).contiguous();
  return batch;
}

nlohmann::json GpTaskGenerator::to_json() const {
  return m_config.to_json();
}

std::optional<GpTaskConfig> gp_task_prior(const TaskSource& source) {
  if (const auto* gp = dynamic_cast<const GpTaskGenerator*>(&source)) return gp->config();
  return std::nullopt;
}

}  // namespace npe
