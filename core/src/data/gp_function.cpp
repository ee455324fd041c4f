#include "npe/data/gp_function.h"

#include <cmath>
#include <random>

#include <torch/torch.h>

#include "npe/linalg.h"

namespace npe {

GpFunctionSample::GpFunctionSample(const KernelSpec& kernel, uint64_t seed, double half_range,
                                   int grid_points)
    : m_half_range(half_range) {
  torch::NoGradGuard no_grad;
  auto x = torch::linspace(-half_range, half_range, grid_points, torch::kFloat64).unsqueeze(-1);
  // Start at 1e-8 and accept the last factor: a sample of a nearly singular prior is still a
  // faithful draw for display.
  auto chol = jittered_cholesky(kernel_matrix(kernel, x, x), JitterOptions{1e-8, 1e-2, false});
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  auto eps = torch::empty({grid_points}, torch::kFloat64);
  auto* e = eps.data_ptr<double>();
  for (int i = 0; i < grid_points; ++i) e[i] = normal(engine);
  auto f = chol.matmul(eps).contiguous();
  m_values.assign(f.data_ptr<double>(), f.data_ptr<double>() + grid_points);
}

double GpFunctionSample::value(double x) const {
  if (m_values.size() < 2 || !(std::abs(x) <= m_half_range)) return std::nan("");
  const int n = static_cast<int>(m_values.size());
  const double position = (x + m_half_range) / (2.0 * m_half_range) * (n - 1);
  const int i = std::min(n - 2, static_cast<int>(position));
  const double t = position - i;
  return (1.0 - t) * m_values[i] + t * m_values[i + 1];
}

std::vector<std::pair<double, double>> GpFunctionSample::sample_points(int n, double noise_std,
                                                                       double low, double high,
                                                                       uint64_t seed) const {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  std::normal_distribution<double> normal;
  std::vector<std::pair<double, double>> points;
  for (int i = 0; i < n; ++i) {
    const double x = uniform(engine);
    points.emplace_back(x, value(x) + noise_std * normal(engine));
  }
  return points;
}

}  // namespace npe
