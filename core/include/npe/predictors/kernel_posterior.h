#pragma once
// What a predictor that weighs kernel hypotheses (gp-bayes) believes about the data's kernel
// once it has seen the context: the posterior probability of each kernel family of its prior,
// and the posterior of the family's scale. The 1-D tab draws it, so the user sees what the
// context points say about the function that made them.

#include <cstddef>
#include <vector>

#include "npe/ground/kernels.h"

namespace npe {

/// One kernel family of the prior: its posterior probability and the posterior of its scale ell
/// given the family.
struct KernelFamilyPosterior {
  KernelKind kind = KernelKind::SquaredExponential;
  double probability = 0.0;
  /// Posterior mass of ell in each bin of KernelPosterior's range (equal widths in log ell, as
  /// the prior is log-uniform); the masses sum to `probability`.
  std::vector<double> scale_mass;
  /// The posterior median of ell given the family (NaN when the family has no mass).
  double median_scale = 0.0;
};

/// ell is the lengthscale of the SE and Matérn-5/2 kernels and the period of the periodic
/// kernel, as in the paper's 1-D tasks (Appendix F.1).
struct KernelPosterior {
  double scale_low = 0.0, scale_high = 0.0;     ///< the prior's range of ell
  std::vector<KernelFamilyPosterior> families;  ///< in the order of the prior's kernels

  /// Index of the most probable family (0 when there are none).
  size_t most_probable() const {
    size_t best = 0;
    for (size_t f = 1; f < families.size(); ++f) {
      if (families[f].probability > families[best].probability) best = f;
    }
    return best;
  }
};

}  // namespace npe
