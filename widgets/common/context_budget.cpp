#include "common/context_budget.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <QLocale>

#include <torch/torch.h>

namespace npe::widgets {

double CostCalibration::flops_per_ms(const QString& id) const {
  std::lock_guard lock(m_mutex);
  auto it = m_flops_per_ms.find(id);
  return it == m_flops_per_ms.end() ? kDefaultFlopsPerMs : it->second;
}

double CostCalibration::estimate_ms(const QString& id, double flops) const {
  if (!std::isfinite(flops)) return std::numeric_limits<double>::quiet_NaN();
  return kOverheadMs + flops / flops_per_ms(id);
}

void CostCalibration::record(const QString& id, double flops, double milliseconds) {
  if (!std::isfinite(flops) || flops <= 0.0 || !(milliseconds > 0.0)) return;
  // Short calls count too (a model whose default estimate is far too slow must learn it even
  // when it takes milliseconds), with at most half of the time put down to the overhead.
  const double measured = flops / std::max(milliseconds - kOverheadMs, milliseconds / 2.0);
  std::lock_guard lock(m_mutex);
  auto [it, fresh] = m_flops_per_ms.try_emplace(id, measured);
  // Geometric mean with the history: one slow round (another program busy) moves the estimate
  // half-way, not all the way.
  if (!fresh) it->second = std::sqrt(it->second * measured);
}

ContextPlan plan_context(const CostCalibration& calibration, const QString& id,
                         const Predictor& predictor, const BatchShape& shape, double budget_ms) {
  ContextPlan plan;
  plan.total = shape.num_context;
  int64_t high = shape.num_context;
  if (predictor.max_context() > 0) high = std::min(high, predictor.max_context());
  auto at = [&](int64_t context) {
    auto s = shape;
    s.num_context = context;
    const double flops = predictor.prediction_flops(s);
    return std::pair{flops, calibration.estimate_ms(id, flops)};
  };
  auto [flops, ms] = at(high);
  plan.whole_ms = high == shape.num_context ? ms : at(shape.num_context).second;
  // Unknown cost, or it fits: the whole (capped) context.
  if (!std::isfinite(ms) || ms <= budget_ms || high <= kMinimumContext) {
    plan.context = high;
    plan.flops = flops;
    plan.estimated_ms = ms;
    return plan;
  }
  // The cost grows with the context: bisect for the largest count that fits.
  int64_t low = std::min<int64_t>(kMinimumContext, high);
  while (high - low > std::max<int64_t>(1, low / 64)) {
    const int64_t middle = low + (high - low) / 2;
    if (at(middle).second <= budget_ms) {
      low = middle;
    } else {
      high = middle;
    }
  }
  plan.context = low;
  std::tie(plan.flops, plan.estimated_ms) = at(low);
  return plan;
}

Task subsample_context(const Task& task, int64_t count) {
  const int64_t total = task.num_context();
  if (count >= total) return task;
  auto index = torch::arange(count, torch::kLong).mul(total).div(count, "floor");
  Task subset = task;
  subset.xc = task.xc.index_select(1, index.to(task.xc.device()));
  subset.yc = task.yc.index_select(1, index.to(task.yc.device()));
  return subset;
}

double input_span(const Task& task) {
  std::vector<torch::Tensor> inputs;
  for (const auto* x : {&task.xc, &task.xt}) {
    if (x->defined() && x->numel() > 0) inputs.push_back(x->reshape({-1, x->size(-1)}));
  }
  if (inputs.empty()) return 0.0;
  const auto all = torch::cat(inputs, 0);
  return (std::get<0>(all.max(0)) - std::get<0>(all.min(0))).max().item<double>();
}

QString describe_subset(const ContextPlan& plan) {
  if (!plan.subset()) return {};
  QLocale locale(QLocale::English);
  return QObject::tr("on %1 of %2 points")
      .arg(locale.toString(qlonglong(plan.context)), locale.toString(qlonglong(plan.total)));
}

}  // namespace npe::widgets
