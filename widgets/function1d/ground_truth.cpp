#include "ground_truth.h"

namespace npe::widgets {
namespace {
constexpr int kHeldOutPoints = 100;
}  // namespace

GroundTruth::GroundTruth(const GroundTruthSpec& spec)
    : m_spec(spec), m_function(kernel(), spec.seed, kHalfRange) {
  m_held_out = sample_points(kHeldOutPoints, spec.noise_std, -3.0, 3.0, spec.seed + 7919);
}

double GroundTruth::value(double base_x) const {
  return m_function.value(base_x);
}

std::pair<QVector<double>, QVector<double>> GroundTruth::curve(double shift, int segments) const {
  QVector<double> x, y;
  x.reserve(segments + 1);
  y.reserve(segments + 1);
  for (int i = 0; i <= segments; ++i) {
    const double base = -kHalfRange + i * 2.0 * kHalfRange / segments;
    x.push_back(base + shift);
    y.push_back(value(base));
  }
  return {std::move(x), std::move(y)};
}

std::vector<QPointF> GroundTruth::sample_points(int n, double noise_std, double low, double high,
                                                uint64_t seed) const {
  std::vector<QPointF> points;
  for (const auto& [x, y] : m_function.sample_points(n, noise_std, low, high, seed)) {
    points.emplace_back(x, y);
  }
  return points;
}

}  // namespace npe::widgets
