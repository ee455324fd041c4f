#pragma once
// Numerical linear algebra shared by the GP code paths.

#include <torch/types.h>

namespace npe {

/// Jitter schedule of jittered_cholesky. Jitter is relative to the mean absolute diagonal.
struct JitterOptions {
  double initial = 1e-9;
  double maximum = 1e-1;
  /// When even the largest jitter fails: throw (true) or return the last factor (false).
  bool throw_on_failure = true;
};

/// Lower Cholesky factor of a (batched) symmetric positive semi-definite matrix [..., N, N],
/// adding jitter * mean|diag| * I, starting at options.initial and growing tenfold, until every
/// matrix in the batch factorises. Duplicate inputs and smooth kernels on dense grids make
/// covariance matrices numerically singular; this is the one place that handles it.
/// Throws InvalidInputError when the matrix is not finite, or (by default) when it cannot be
/// factorised with options.maximum jitter.
torch::Tensor jittered_cholesky(const torch::Tensor& matrix, const JitterOptions& options = {});

}  // namespace npe
