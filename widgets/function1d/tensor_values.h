#pragma once
// A tensor's values as doubles in memory order, on the CPU (for plotting and tables).

#include <vector>

#include <torch/types.h>

namespace npe::widgets {

inline std::vector<double> tensor_values(const torch::Tensor& t) {
  auto flat = t.reshape({-1}).to(torch::kCPU, torch::kFloat64).contiguous();
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

}  // namespace npe::widgets
