#include "ground_truth.h"

#include <cmath>
#include <random>

#include <torch/torch.h>

namespace npe::widgets {
namespace {
constexpr int kGridPoints = 801;
constexpr int kHeldOutPoints = 100;
}  // namespace

GroundTruth::GroundTruth(const GroundTruthSpec& spec) : m_spec(spec) {
  torch::NoGradGuard no_grad;
  auto x = torch::linspace(-kHalfRange, kHalfRange, kGridPoints, torch::kFloat64).unsqueeze(-1);
  auto k = kernel_matrix(kernel(), x, x);
  // Smooth kernels on a dense grid are numerically singular; add jitter until it factorises.
  torch::Tensor chol;
  for (double jitter = 1e-8;; jitter *= 10) {
    auto [factor, info] =
        torch::linalg_cholesky_ex(k + jitter * torch::eye(kGridPoints, k.options()));
    if (info.item<int64_t>() == 0 || jitter > 1e-2) {
      chol = factor;
      break;
    }
  }
  std::mt19937_64 engine(spec.seed);
  std::normal_distribution<double> normal;
  auto eps = torch::empty({kGridPoints}, torch::kFloat64);
  for (int i = 0; i < kGridPoints; ++i) eps[i] = normal(engine);
  auto f = chol.matmul(eps).contiguous();
  m_values.assign(f.data_ptr<double>(), f.data_ptr<double>() + kGridPoints);
  m_held_out = sample_points(kHeldOutPoints, spec.noise_std, -3.0, 3.0, spec.seed + 7919);
}

double GroundTruth::value(double base_x) const {
  if (m_values.empty() || !(std::abs(base_x) <= kHalfRange)) return std::nan("");
  const double position = (base_x + kHalfRange) / (2.0 * kHalfRange) * (kGridPoints - 1);
  const int i = std::min(kGridPoints - 2, static_cast<int>(position));
  const double t = position - i;
  return (1.0 - t) * m_values[i] + t * m_values[i + 1];
}

std::vector<QPointF> GroundTruth::sample_points(int n, double noise_std, double low, double high,
                                                uint64_t seed) const {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  std::normal_distribution<double> normal;
  std::vector<QPointF> points;
  for (int i = 0; i < n; ++i) {
    const double x = uniform(engine);
    points.emplace_back(x, value(x) + noise_std * normal(engine));
  }
  return points;
}

}  // namespace npe::widgets
