#include "npe/ground/task.h"

#include <cmath>
#include <sstream>

#include <torch/torch.h>

#include "npe/errors.h"

namespace npe {
namespace {

std::string shape_of(const torch::Tensor& t) {
  if (!t.defined()) return "undefined";
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

void require(bool condition, const std::string& message) {
  if (!condition) throw InvalidInputError(message);
}

}  // namespace

Task Task::to(torch::Device device, std::optional<torch::ScalarType> dtype) const {
  auto move = [&](const torch::Tensor& t) {
    if (!t.defined()) return torch::Tensor();
    return t.to(device, dtype.value_or(t.scalar_type()));
  };
  return {move(xc), move(yc), move(xt), move(yt)};
}

void validate_translation(const Translation& tau) {
  for (double v : tau) {
    require(std::isfinite(v), "translation must be finite, got " + describe_translation(tau));
    require(std::abs(v) <= kMaxTranslation,
            "translation " + describe_translation(tau) +
                " is beyond |Δ| = 1e6, the largest shift at which the shifted inputs keep the "
                "digits that tell points apart (float64 rounds x + Δ to a multiple of " +
                describe_translation({std::abs(v) * 2.220446049250313e-16}) + " there)");
  }
}

torch::Tensor translation_tensor(const Translation& tau, int64_t dim_x) {
  validate_translation(tau);
  if (tau.empty()) return torch::zeros({dim_x}, torch::kFloat64);
  if (tau.size() == 1) return torch::full({dim_x}, tau[0], torch::kFloat64);
  require(static_cast<int64_t>(tau.size()) == dim_x,
          "translation " + describe_translation(tau) + " has " + std::to_string(tau.size()) +
              " components but the inputs have D_x = " + std::to_string(dim_x));
  return torch::tensor(tau, torch::kFloat64);
}

std::string describe_translation(const Translation& tau) {
  std::ostringstream out;
  if (tau.size() == 1) {
    out << tau[0];
    return out.str();
  }
  out << "(";
  for (size_t i = 0; i < tau.size(); ++i) out << (i ? ", " : "") << tau[i];
  out << ")";
  return tau.empty() ? "0" : out.str();
}

Task Task::translated(const Translation& tau) const {
  if (tau.empty()) return *this;
  // Added in float64 and converted back, so large shifts lose no more than one rounding.
  auto t = translation_tensor(tau, dim_x());
  auto shift = [&](const torch::Tensor& x) {
    return (x.to(torch::kFloat64) + t.to(x.device())).to(x.scalar_type());
  };
  return {shift(xc), yc, shift(xt), yt};
}

void validate_task(const Task& task, bool require_target_outputs) {
  const std::string shapes = "xc " + shape_of(task.xc) + ", yc " + shape_of(task.yc) + ", xt " +
                             shape_of(task.xt) + ", yt " + shape_of(task.yt);
  require(task.xc.defined() && task.yc.defined() && task.xt.defined(),
          "task needs xc, yc and xt (" + shapes + ")");
  require(task.xc.dim() == 3 && task.yc.dim() == 3 && task.xt.dim() == 3,
          "task tensors must be [batch, points, dims] (" + shapes + ")");
  const auto b = task.xc.size(0);
  require(task.yc.size(0) == b && task.xt.size(0) == b, "batch sizes differ (" + shapes + ")");
  require(task.yc.size(1) == task.xc.size(1),
          "xc and yc have different numbers of context points (" + shapes + ")");
  require(task.xt.size(2) == task.xc.size(2), "xc and xt have different D_x (" + shapes + ")");
  require(task.xc.size(2) >= 1 && task.yc.size(2) >= 1,
          "D_x and D_y must be >= 1 (" + shapes + ")");
  if (task.yt.defined() || require_target_outputs) {
    require(task.yt.defined(), "task needs target outputs yt (" + shapes + ")");
    require(task.yt.dim() == 3 && task.yt.size(0) == b && task.yt.size(1) == task.xt.size(1) &&
                task.yt.size(2) == task.yc.size(2),
            "yt must be [batch, Nt, D_y] matching xt and yc (" + shapes + ")");
  }
  auto finite = [](const torch::Tensor& t) {
    return t.numel() == 0 || torch::isfinite(t).all().item<bool>();
  };
  require(finite(task.xc) && finite(task.yc), "context contains NaN or infinite values");
  require(finite(task.xt), "target inputs contain NaN or infinite values");
  if (task.yt.defined()) require(finite(task.yt), "target outputs contain NaN or infinite values");
}

}  // namespace npe
