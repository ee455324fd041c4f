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

std::vector<QPointF> GroundTruth::sample_points(int n, double noise_std, double low, double high,
                                                uint64_t seed) const {
  std::vector<QPointF> points;
  for (const auto& [x, y] : m_function.sample_points(n, noise_std, low, high, seed)) {
    points.emplace_back(x, y);
  }
  return points;
}

}  // namespace npe::widgets
