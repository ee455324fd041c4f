#pragma once
// Synthetic 1-D (or D_x-dimensional) GP regression tasks, as in the paper's Appendix F.1.

#include <memory>
#include <optional>

#include "npe/data/task_source.h"
#include "npe/ground/kernels.h"

namespace npe {

/// Configuration of GP-generated tasks. Defaults are the paper's setting (Appendix F.1): kernel
/// uniformly from {SE, periodic, Matern-5/2} of eq. 36, its scale ell log-uniform on [0.25, 4]
/// (the lengthscale of SE and Matern-5/2, the period of the periodic kernel, whose lengthscale
/// is 1), unit signal variance, noise stddev 0.2, Nc ~ U{1..64}, Nt = 128, xc ~ U(-2, 2),
/// xt ~ U(-3, 3). The authors' public configs differ (five kernels, noise 0.1, other ranges);
/// this follows the paper's text.
struct GpTaskConfig {
  std::vector<KernelKind> kernels = {KernelKind::SquaredExponential, KernelKind::Periodic,
                                     KernelKind::Matern52};
  double min_lengthscale = 0.25;
  double max_lengthscale = 4.0;
  double signal_variance = 1.0;
  double noise_std = 0.2;
  int64_t min_num_context = 1;
  int64_t max_num_context = 64;
  int64_t num_targets = 128;
  double context_low = -2.0;
  double context_high = 2.0;
  double target_low = -3.0;
  double target_high = 3.0;
  int64_t dim_x = 1;
  int64_t dim_y = 1;

  nlohmann::json to_json() const;
  /// Throws ConfigError for missing or invalid fields.
  static GpTaskConfig from_json(const nlohmann::json& json);
  /// Throws ConfigError when ranges or counts are inconsistent.
  void validate() const;
};

/// Samples GP tasks. One Nc is drawn per batch (all tasks in a batch share it), each task
/// draws its own kernel and lengthscale. Sampling is done in float64 on the CPU from a
/// generator seeded by `seed` alone, so results are reproducible and shift-paired.
class GpTaskGenerator final : public TaskSource {
 public:
  explicit GpTaskGenerator(GpTaskConfig config = {});

  std::string name() const override { return "gp1d"; }
  int64_t dim_x() const override { return m_config.dim_x; }
  int64_t dim_y() const override { return m_config.dim_y; }
  /// The split only selects seeds upstream (synthetic tasks); batches carry a GpOracle.
  TaskBatch sample(int64_t batch_size, uint64_t seed, const Translation& tau = {},
                   Split split = Split::Train) const override;
  nlohmann::json to_json() const override;
  /// Δ = 2: every context point leaves the training range [-2, 2].
  Translation out_of_range_translation() const override { return {2.0}; }

  const GpTaskConfig& config() const { return m_config; }

 private:
  GpTaskConfig m_config;
};

/// The prior of a GP task source (its configuration), or nothing for tasks of another kind:
/// what the Bayes-optimal GP (gp-bayes) averages over.
std::optional<GpTaskConfig> gp_task_prior(const TaskSource& source);

}  // namespace npe
