#include "npe/task.h"

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

Task Task::to(torch::Device device, torch::ScalarType dtype) const {
  auto move = [&](const torch::Tensor& t) {
    return t.defined() ? t.to(device, dtype) : torch::Tensor();
  };
  return {move(xc), move(yc), move(xt), move(yt)};
}

Task Task::translated(double shift) const {
  return {xc + shift, yc, xt + shift, yt};
}

Task Task::translated(const torch::Tensor& tau) const {
  require(tau.dim() == 1 && tau.size(0) == dim_x(), "translation vector must have shape [Dx] = [" +
                                                        std::to_string(dim_x()) + "], got " +
                                                        shape_of(tau));
  auto t = tau.to(xc.options());
  return {xc + t, yc, xt + t, yt};
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
