#pragma once
// One function drawn from a GP prior on a dense 1-D grid: the explorer's known ground truth.

#include <cstdint>
#include <utility>
#include <vector>

#include "npe/ground/kernels.h"

namespace npe {

/// A GP prior sample f on [-half_range, half_range], linearly interpolated between grid points.
/// The same (kernel, seed) always gives the same function.
class GpFunctionSample {
 public:
  GpFunctionSample() = default;
  /// Samples on `grid_points` points with the shared jittered Cholesky (smooth kernels on a
  /// dense grid are numerically singular).
  GpFunctionSample(const KernelSpec& kernel, uint64_t seed, double half_range = 20.0,
                   int grid_points = 801);

  /// f(x); NaN outside the range.
  double value(double x) const;
  /// n noisy observations (x, f(x) + noise) with x ~ U(low, high), reproducible from seed.
  std::vector<std::pair<double, double>> sample_points(int n, double noise_std, double low,
                                                       double high, uint64_t seed) const;
  double half_range() const { return m_half_range; }

 private:
  double m_half_range = 20.0;
  std::vector<double> m_values;
};

}  // namespace npe
