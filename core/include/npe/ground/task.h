#pragma once
// A batch of regression tasks in the neural-process sense: context set and target set.

#include <optional>
#include <vector>

#include <torch/types.h>

namespace npe {

/// A translation of the input space: one value per input dimension [D_x]. Empty means no
/// translation; a single value is applied to every input dimension.
using Translation = std::vector<double>;

/// The largest |component| of a translation. Inputs are shifted in float64, whose spacing at
/// 1e6 is 1.2e-10: every input keeps the digits that tell points apart (translation-equivariant
/// models then measure from a point of the data and lose nothing). Far beyond, x + Δ rounds
/// away x itself (at 1e308 every input becomes the same number), so results would mean nothing.
constexpr double kMaxTranslation = 1e6;

/// The translation as a [D_x] float64 tensor. Throws InvalidInputError when the size is neither
/// 0, 1 nor dim_x, or a value is not finite or beyond kMaxTranslation.
torch::Tensor translation_tensor(const Translation& tau, int64_t dim_x);
/// Throws InvalidInputError when a component is not finite or beyond kMaxTranslation, saying why.
void validate_translation(const Translation& tau);
/// "0.5" or "(3, -2)".
std::string describe_translation(const Translation& tau);

/// A batch of B tasks. Shapes: xc [B,Nc,Dx], yc [B,Nc,Dy], xt [B,Nt,Dx], yt [B,Nt,Dy].
/// yt is undefined when target outputs are unknown (prediction only). Nc may be 0.
struct Task {
  torch::Tensor xc;
  torch::Tensor yc;
  torch::Tensor xt;
  torch::Tensor yt;

  int64_t batch_size() const { return xc.size(0); }
  int64_t num_context() const { return xc.size(1); }
  int64_t num_targets() const { return xt.size(1); }
  int64_t dim_x() const { return xc.size(2); }
  int64_t dim_y() const { return yc.size(2); }
  bool has_target_outputs() const { return yt.defined(); }

  /// Same task on another device, in the given dtype or, without one, in its own (tasks may
  /// carry float64 inputs so that large translations stay exact until a model sees them).
  Task to(torch::Device device, std::optional<torch::ScalarType> dtype = std::nullopt) const;
  /// All inputs (context and target) translated by tau (see Translation). Throws
  /// InvalidInputError for a translation of the wrong size.
  Task translated(const Translation& tau) const;
};

/// Checks ranks, matching sizes and finiteness. Throws InvalidInputError with the offending
/// shapes. With require_target_outputs, yt must be present and well formed.
void validate_task(const Task& task, bool require_target_outputs = false);

}  // namespace npe
