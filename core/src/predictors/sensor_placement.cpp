#include "npe/predictors/sensor_placement.h"
#include "npe/data/gp_oracle.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "npe/errors.h"
#include "npe/predictors/gp.h"

namespace npe {
namespace {

void check_inputs(const TaskBatch& batch, const torch::Tensor& candidates, int64_t count) {
  validate_task(batch.task);
  if (batch.task.batch_size() != 1) {
    throw InvalidInputError("sensor placement works on one task at a time (" +
                            std::to_string(batch.task.batch_size()) + " given)");
  }
  if (!candidates.defined() || candidates.dim() != 2 || candidates.size(0) < 1 ||
      candidates.size(1) != batch.task.dim_x()) {
    throw InvalidInputError(
        "the candidates must be [N >= 1, D_x = " + std::to_string(batch.task.dim_x()) + "] places");
  }
  if (!torch::isfinite(candidates).all().item<bool>())
    throw InvalidInputError("the candidates hold NaN or infinite coordinates");
  if (count < 1 || count > candidates.size(0)) {
    throw InvalidInputError("the number of proposals must be between 1 and the " +
                            std::to_string(candidates.size(0)) + " candidates (" +
                            std::to_string(count) + " asked)");
  }
}

// The oracle of a one-task batch for `tasks` tasks of the same process (a GP oracle carries one
// kernel per task).
std::shared_ptr<const TaskOracle> oracle_for(const TaskBatch& batch, int64_t tasks) {
  if (!batch.oracle) return nullptr;
  const auto* gp = dynamic_cast<const GpOracle*>(batch.oracle.get());
  if (!gp) throw ConfigError("sensor placement can carry over only a GP oracle");
  return std::make_shared<GpOracle>(std::vector<KernelSpec>(size_t(tasks), gp->kernels().at(0)),
                                    gp->noise_std());
}

// Summed predictive variance of each task of a prediction: [B] float64.
torch::Tensor total_variance(const Prediction& p) {
  return p.stddev.to(torch::kFloat64).square().sum({1, 2});
}

// The index of the best unplaced candidate.
int64_t best_candidate(const torch::Tensor& scores, const std::vector<bool>& placed) {
  const auto s = scores.accessor<double, 1>();
  int64_t best = -1;
  for (int64_t c = 0; c < scores.size(0); ++c) {
    if (placed[size_t(c)]) continue;
    if (best < 0 || s[c] > s[best]) best = c;
  }
  return best;
}

}  // namespace

Placement place_sensors(Predictor& predictor, const TaskBatch& batch,
                        const torch::Tensor& candidates_in, const PlacementOptions& options) {
  check_inputs(batch, candidates_in, options.count);
  if (options.candidate_batch < 1) throw InvalidInputError("candidates per batch must be >= 1");
  const auto candidates = candidates_in.to(torch::kCPU, batch.task.xc.scalar_type());
  const int64_t n = candidates.size(0);
  Task current = batch.task.to(torch::kCPU);
  current.yt = torch::Tensor();
  std::vector<bool> placed(size_t(n), false);
  Placement result;
  const bool per_candidate = options.score == AcquisitionScore::variance_reduction;
  Progress progress{0, per_candidate ? options.count * n : options.count, "placing sensors"};

  for (int64_t round = 0; round < options.count; ++round) {
    // The model's own belief at every candidate: the value a pseudo-observation there takes.
    const Task at_candidates{current.xc, current.yc, candidates.unsqueeze(0), {}};
    const auto belief = predictor.predict({at_candidates, oracle_for(batch, 1)});
    auto scores = torch::full({n}, -std::numeric_limits<double>::infinity(), torch::kFloat64);
    if (!per_candidate) {
      scores = belief.stddev[0].to(torch::kFloat64).square().sum(-1).sqrt();
      ++progress.done;
      if (options.progress && !options.progress(progress)) result.complete = false;
    } else {
      const double before =
          total_variance(predictor.predict({current, oracle_for(batch, 1)})).item<double>();
      std::vector<int64_t> open;
      for (int64_t c = 0; c < n; ++c)
        if (!placed[size_t(c)]) open.push_back(c);
      for (size_t start = 0; start < open.size() && result.complete;
           start += size_t(options.candidate_batch)) {
        const auto m = int64_t(std::min(open.size() - start, size_t(options.candidate_batch)));
        const auto index = torch::tensor(
            std::vector<int64_t>(open.begin() + long(start), open.begin() + long(start) + m));
        const auto nc = current.num_context();
        Task with_candidate{
            torch::cat({current.xc.expand({m, nc, current.dim_x()}).contiguous(),
                        candidates.index_select(0, index).unsqueeze(1)},
                       1),
            torch::cat({current.yc.expand({m, nc, current.dim_y()}).contiguous(),
                        belief.mean[0].index_select(0, index).unsqueeze(1).to(current.yc.dtype())},
                       1),
            current.xt.expand({m, current.num_targets(), current.dim_x()}).contiguous(),
            {}};
        const auto after =
            total_variance(predictor.predict({with_candidate, oracle_for(batch, m)}));
        scores.index_put_({index}, before - after);
        progress.done += m;
        if (options.progress && !options.progress(progress)) result.complete = false;
      }
    }
    if (round == 0) result.first_scores = scores.clone();
    if (!result.complete) break;
    const auto best = best_candidate(scores, placed);
    placed[size_t(best)] = true;
    result.chosen.push_back(best);
    result.scores.push_back(scores[best].item<double>());
    current.xc = torch::cat({current.xc, candidates[best].view({1, 1, -1})}, 1);
    current.yc =
        torch::cat({current.yc, belief.mean[0][best].view({1, 1, -1}).to(current.yc.dtype())}, 1);
  }
  return result;
}

Placement exact_gp_placement(Predictor& predictor, const TaskBatch& batch,
                             const torch::Tensor& candidates_in, int64_t count) {
  check_inputs(batch, candidates_in, count);
  const auto candidates = candidates_in.to(torch::kCPU, batch.task.xc.scalar_type());
  const int64_t n = candidates.size(0), nt = batch.task.num_targets(), dy = batch.task.dim_y();
  Task current = batch.task.to(torch::kCPU);
  current.yt = torch::Tensor();
  std::vector<bool> placed(size_t(n), false);
  Placement result;
  for (int64_t round = 0; round < count; ++round) {
    const Task joint_task{
        current.xc, current.yc, torch::cat({current.xt, candidates.unsqueeze(0)}, 1), {}};
    const TaskBatch joint{joint_task, oracle_for(batch, 1)};
    const auto covariance = predictor.predictive_covariance(joint);
    if (!covariance.defined()) {
      throw ConfigError(predictor.info().display_name +
                        " has no closed-form predictive covariance");
    }
    const auto cov = covariance[0];  // [(Nt + N) Dy, same], target-major
    auto scores = torch::full({n}, -std::numeric_limits<double>::infinity(), torch::kFloat64);
    for (int64_t c = 0; c < n; ++c) {
      if (placed[size_t(c)]) continue;
      const auto at = (nt + c) * dy;
      const auto cross = cov.narrow(0, 0, nt * dy).narrow(1, at, dy);  // [Nt Dy, Dy]
      const auto own = cov.narrow(0, at, dy).narrow(1, at, dy);        // [Dy, Dy]
      // trace(C_tc C_cc^-1 C_ct): the drop of the targets' summed variance.
      const auto solved = torch::linalg_solve(own, cross.t());
      scores[c] = (cross.t() * solved).sum().item<double>();
    }
    if (round == 0) result.first_scores = scores.clone();
    const auto best = best_candidate(scores, placed);
    placed[size_t(best)] = true;
    result.chosen.push_back(best);
    result.scores.push_back(scores[best].item<double>());
    const Task at_best{current.xc, current.yc, candidates[best].view({1, 1, -1}), {}};
    const auto mean = predictor.predict({at_best, oracle_for(batch, 1)}).mean;
    current.xc = torch::cat({current.xc, candidates[best].view({1, 1, -1})}, 1);
    current.yc = torch::cat({current.yc, mean.to(current.yc.dtype())}, 1);
  }
  return result;
}

}  // namespace npe
