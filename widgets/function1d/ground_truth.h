#pragma once
// The known function behind the 1-D explorer's data: a GP sample on a dense grid.

#include <cstdint>
#include <utility>
#include <vector>

#include <QPointF>
#include <QVector>

#include "npe/data/gp_function.h"
#include "npe/ground/kernels.h"

namespace npe::widgets {

/// What generates the ground truth; the same spec (and seed) always gives the same function.
struct GroundTruthSpec {
  KernelKind kernel = KernelKind::SquaredExponential;
  /// The kernel's scale ell: its lengthscale, or its period for the periodic kernel (eq. 36).
  double lengthscale = 1.0;
  double noise_std = 0.2;
  uint64_t seed = 1;
};

/// A function sampled from a GP prior on a dense grid of base coordinates (before any shift),
/// plus held-out noisy observations in the training target range [-3, 3].
class GroundTruth {
 public:
  /// Half-width of the base range the function is defined on.
  static constexpr double kHalfRange = 20.0;

  GroundTruth() = default;
  /// Samples the function (core's GpFunctionSample: 801 grid points; ~10 ms).
  explicit GroundTruth(const GroundTruthSpec& spec);

  const GroundTruthSpec& spec() const { return m_spec; }
  /// Linear interpolation of the function at a base coordinate; NaN outside the range.
  double value(double base_x) const;
  /// The function as a polyline of `segments` + 1 points over the base range, moved by shift.
  std::pair<QVector<double>, QVector<double>> curve(double shift, int segments = 1600) const;
  /// Held-out observations (base coordinates) used for the live log-likelihood.
  const std::vector<QPointF>& held_out() const { return m_held_out; }
  /// n noisy observations at x ~ U(low, high) (base coordinates), reproducible from seed.
  std::vector<QPointF> sample_points(int n, double noise_std, double low, double high,
                                     uint64_t seed) const;
  /// The paper's kernel (eq. 36) with ell = spec().lengthscale: the period of the periodic one.
  KernelSpec kernel() const { return paper_kernel(m_spec.kernel, m_spec.lengthscale); }

 private:
  GroundTruthSpec m_spec;
  GpFunctionSample m_function;
  std::vector<QPointF> m_held_out;
};

}  // namespace npe::widgets
