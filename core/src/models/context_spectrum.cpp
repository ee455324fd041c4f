#include "npe/models/context_spectrum.h"

#include <cmath>

#include <torch/torch.h>

namespace npe {

ContextSpectrum context_spectrum(const torch::Tensor& xc, const torch::Tensor& yc, int64_t peaks) {
  torch::NoGradGuard no_grad;
  const auto b = xc.size(0), nc = xc.size(1), dx = xc.size(2);
  const auto options = xc.options().dtype(torch::kFloat32);
  if (nc < 2 || peaks < 1) {
    return {torch::ones({b, dx, std::max<int64_t>(peaks, 0)}, options),
            torch::zeros({b, dx, std::max<int64_t>(peaks, 0)}, options)};
  }
  // The bank, long periods first: log-spaced angular frequencies.
  const auto log_omega =
      torch::linspace(std::log(2.0 * M_PI / kSpectrumLongestPeriod),
                      std::log(2.0 * M_PI / kSpectrumShortestPeriod), kSpectrumBankSize, options);
  const double step = (log_omega[1] - log_omega[0]).item<double>();
  const auto omega = log_omega.exp();
  // Centred first (in float64): the magnitude does not depend on the origin, and phases of
  // raw inputs far from it (the 1-D tab shifts by up to 10^6) would be rounding noise.
  const auto x64 = xc.to(torch::kFloat64);
  const auto x = (x64 - x64.mean(1, true)).to(torch::kFloat32);
  const auto y = yc.to(torch::kFloat32) - yc.to(torch::kFloat32).mean(1, true);  // [B,Nc,Dy]
  // Lomb–Scargle: the share of the context's variance that the best sinusoid of each frequency
  // explains (the least-squares fit, exact for unevenly spaced points, where the plain
  // periodogram's peak drifts by a percent or more). The offset tau makes the cosine and sine
  // parts orthogonal over the context.
  const auto phase = x.unsqueeze(-1) * omega;  // [B,Nc,Dx,G]
  const auto tau = torch::atan2((2.0 * phase).sin().sum(1, true), (2.0 * phase).cos().sum(1, true));
  const auto shifted = phase - 0.5 * tau;
  const auto c = shifted.cos(), s = shifted.sin();
  const auto cy = torch::einsum("bcdg,bco->bdgo", {c, y});
  const auto sy = torch::einsum("bcdg,bco->bdgo", {s, y});
  const auto cc = c.square().sum(1).clamp_min(1e-9).unsqueeze(-1);  // [B,Dx,G,1]
  const auto ss = s.square().sum(1).clamp_min(1e-9).unsqueeze(-1);
  const auto energy = y.square().sum({1, 2}).view({b, 1, 1});
  const auto explained = (cy.square() / cc + sy.square() / ss).sum(-1);  // [B,Dx,G]
  const auto power = torch::where(energy > 1e-12, explained / energy.clamp_min(1e-12),
                                  torch::zeros_like(explained))
                         .clamp(0.0, 1.0);
  // Local maxima (the ends count when higher than their one neighbour).
  const auto left = torch::cat(
      {torch::full({b, dx, 1}, -1.0, options), power.narrow(2, 0, kSpectrumBankSize - 1)}, 2);
  const auto right = torch::cat(
      {power.narrow(2, 1, kSpectrumBankSize - 1), torch::full({b, dx, 1}, -1.0, options)}, 2);
  const auto is_peak = power.ge(left) & power.gt(right);
  const auto ranked = torch::where(is_peak, power, torch::full_like(power, -1.0));
  const auto k = std::min<int64_t>(peaks, kSpectrumBankSize);
  auto [top, index] = ranked.topk(k, 2);  // [B,Dx,J]
  // A parabola through log power at the peak and its neighbours places it between bank points.
  const auto at = [&](const torch::Tensor& i) {
    return power.gather(2, i.clamp(0, kSpectrumBankSize - 1)).clamp_min(1e-12).log();
  };
  const auto p0 = at(index - 1), p1 = at(index), p2 = at(index + 1);
  const auto curvature = p0 - 2.0 * p1 + p2;
  const auto inside = index.gt(0) & index.lt(kSpectrumBankSize - 1) & curvature.lt(-1e-9);
  const auto offset =
      torch::where(inside, (0.5 * (p0 - p2) / curvature).clamp(-0.5, 0.5), torch::zeros_like(p1));
  auto frequencies = (log_omega.index_select(0, index.flatten()).view_as(p1) + offset * step).exp();
  const auto found = top.gt(0.0);
  frequencies = torch::where(found, frequencies, torch::ones_like(frequencies));
  const auto weights = torch::where(found, top, torch::zeros_like(top));
  if (k < peaks) {
    return {torch::cat({frequencies, torch::ones({b, dx, peaks - k}, options)}, 2),
            torch::cat({weights, torch::zeros({b, dx, peaks - k}, options)}, 2)};
  }
  return {frequencies, weights};
}

}  // namespace npe
