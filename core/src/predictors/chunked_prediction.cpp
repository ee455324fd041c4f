#include "npe/predictors/chunked_prediction.h"

#include <algorithm>
#include <vector>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {

Prediction predict_in_chunks(Predictor& predictor, const Task& task, int64_t max_targets) {
  if (max_targets < 1) {
    throw ConfigError("targets per prediction call must be at least 1, not " +
                      std::to_string(max_targets));
  }
  validate_task(task);
  const int64_t nt = task.xt.size(1);
  if (nt == 0) {
    const auto empty = torch::zeros({task.batch_size(), 0, task.dim_y()});
    return {empty, empty.clone()};
  }
  const int64_t chunk = predictor.info().capabilities.joint ? nt : max_targets;
  std::vector<Prediction> parts;
  for (int64_t start = 0; start < nt; start += chunk) {
    TaskBatch batch;
    batch.task.xc = task.xc;
    batch.task.yc = task.yc;
    batch.task.xt = task.xt.slice(1, start, std::min(nt, start + chunk));
    parts.push_back(predictor.predict(batch));
  }
  auto joined = parts.size() == 1 ? parts.front() : concat_targets(parts);
  return {joined.mean.to(torch::kCPU, torch::kFloat32),
          joined.stddev.to(torch::kCPU, torch::kFloat32)};
}

}  // namespace npe
