#include "common/placement_job.h"

#include <chrono>
#include <exception>

#include <torch/torch.h>

namespace npe::widgets {

PlacementResult compute_placement(const PlacementRequest& request,
                                  const std::function<bool(int64_t, int64_t)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  PlacementResult result;
  result.serial = request.serial;
  result.model_id = request.model.id;
  result.candidates = request.candidates;
  try {
    if (!request.model.predictor) throw std::runtime_error("the model is not loaded");
    torch::NoGradGuard no_grad;
    PlacementOptions options;
    options.count = std::min<int64_t>(request.count, request.candidates.size(0));
    options.score = request.score;
    if (progress) {
      options.progress = [&](const Progress& p) { return progress(p.done, p.total); };
    }
    const auto placement =
        place_sensors(*request.model.predictor, request.batch, request.candidates, options);
    result.scores = placement.first_scores;
    result.chosen = placement.chosen;
    result.chosen_scores = placement.scores;
    result.cancelled = !placement.complete;
    // The model's mean at each proposal, given the proposals before it: the values the greedy
    // rounds assumed, which a tab places as context when the user adds a proposal.
    Task task = request.batch.task;
    for (const auto index : placement.chosen) {
      const auto place = request.candidates[index].view({1, 1, -1}).to(task.xc.scalar_type());
      const Task at{task.xc, task.yc, place, {}};
      const auto mean = request.model.predictor->predict({at, request.batch.oracle}).mean;
      result.chosen_means.push_back(mean.flatten()[0].item<double>());
      task.xc = torch::cat({task.xc, place}, 1);
      task.yc = torch::cat({task.yc, mean.view({1, 1, -1}).to(task.yc.dtype())}, 1);
    }
  } catch (const std::exception& e) {
    result.error = QString::fromStdString(e.what());
  }
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace npe::widgets
