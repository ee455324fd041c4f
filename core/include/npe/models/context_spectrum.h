#pragma once
// What a context says about its own periods: the strongest frequencies of its periodogram, per
// input dimension. A translation-equivariant model may condition on them (TeAttentionOptions::
// context_frequencies): the periodogram's magnitude does not change when the context is
// shifted, so neither do its peaks, and features cos(ω Δx), sin(ω Δx) of them keep the model
// exactly equivariant. gp-bayes infers a periodic kernel's period from the context and
// continues the oscillation beyond the data; a network that only sees fixed frequencies has to
// learn that inference (issue 105).

#include <cstdint>

#include <torch/types.h>

namespace npe {

struct ContextSpectrum {
  /// Angular frequencies ω of the peaks, [B, Dx, J] (1 where a task has no peak).
  torch::Tensor frequencies;
  /// Each peak's share of the context's variance that the best sinusoid of its frequency
  /// explains (the Lomb–Scargle periodogram, over all outputs), in [0, 1]: about 1 for a clean
  /// sinusoid, about 2/N_c for noise; 0 where there is no peak (and for fewer than two context
  /// points or a constant context).
  torch::Tensor weights;
};

/// The shortest and longest period the periodogram looks at, in input units: the GP tasks'
/// periods (0.25 to 4) with room either side, as the distance_frequencies bank.
inline constexpr double kSpectrumShortestPeriod = 0.125;
inline constexpr double kSpectrumLongestPeriod = 16.0;
/// Frequencies in the bank (log-spaced): about 73 per octave, so that a peak's period is within
/// 0.5 % before the parabolic refinement.
inline constexpr int64_t kSpectrumBankSize = 512;

/// The `peaks` highest local maxima of each input dimension's Lomb–Scargle periodogram of xc
/// [B, Nc, Dx], yc [B, Nc, Dy], refined by a parabola through the peak and its neighbours in
/// log frequency. Computed without gradients (it is a function of the data).
ContextSpectrum context_spectrum(const torch::Tensor& xc, const torch::Tensor& yc, int64_t peaks);

}  // namespace npe
