"""The context's strongest frequencies per input dimension (core/src/models/context_spectrum.cpp):
the highest local maxima of its Lomb-Scargle periodogram over a log-spaced bank of periods 1/8
to 16, refined by a parabola in log frequency, each weighted by the share of the context's
variance its sinusoid explains. Translation invariant: TE models condition on it
(context_frequencies) and stay equivariant."""

import math
from typing import Tuple

import torch


def _log_power_at(power: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return power.gather(2, index.clamp(0, power.shape[2] - 1)).clamp_min(1e-12).log()


def context_spectrum(xc: torch.Tensor, yc: torch.Tensor,
                     peaks: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Angular frequencies and weights, each [B, Dx, peaks]."""
    # The bank of the C++ code (context_spectrum.h); locals, as TorchScript reads no globals.
    shortest_period = 0.125
    longest_period = 16.0
    bank_size = 512
    b, nc, dx = xc.shape[0], xc.shape[1], xc.shape[2]
    if nc < 2:
        return (torch.ones([b, dx, peaks], dtype=torch.float32, device=xc.device),
                torch.zeros([b, dx, peaks], dtype=torch.float32, device=xc.device))
    log_omega = torch.linspace(math.log(2.0 * math.pi / longest_period),
                               math.log(2.0 * math.pi / shortest_period), bank_size,
                               dtype=torch.float32, device=xc.device)
    step = float(log_omega[1] - log_omega[0])
    omega = log_omega.exp()
    x64 = xc.to(torch.float64)
    x = (x64 - x64.mean(1, keepdim=True)).to(torch.float32)
    y = yc.to(torch.float32) - yc.to(torch.float32).mean(1, keepdim=True)
    phase = x.unsqueeze(-1) * omega  # [B,Nc,Dx,G]
    tau = torch.atan2((2.0 * phase).sin().sum(1, keepdim=True),
                      (2.0 * phase).cos().sum(1, keepdim=True))
    shifted = phase - 0.5 * tau
    c = shifted.cos()
    s = shifted.sin()
    cy = torch.einsum("bcdg,bco->bdgo", c, y)
    sy = torch.einsum("bcdg,bco->bdgo", s, y)
    cc = c.square().sum(1).clamp_min(1e-9).unsqueeze(-1)
    ss = s.square().sum(1).clamp_min(1e-9).unsqueeze(-1)
    energy = y.square().sum([1, 2]).view(b, 1, 1)
    explained = (cy.square() / cc + sy.square() / ss).sum(-1)
    power = torch.where(energy > 1e-12, explained / energy.clamp_min(1e-12),
                        torch.zeros_like(explained)).clamp(0.0, 1.0)
    edge = torch.full([b, dx, 1], -1.0, dtype=torch.float32, device=xc.device)
    left = torch.cat([edge, power[:, :, :-1]], 2)
    right = torch.cat([power[:, :, 1:], edge], 2)
    ranked = torch.where(power.ge(left) & power.gt(right), power, torch.full_like(power, -1.0))
    k = min(peaks, bank_size)
    top, index = ranked.topk(k, 2)

    p0 = _log_power_at(power, index - 1)
    p1 = _log_power_at(power, index)
    p2 = _log_power_at(power, index + 1)
    curvature = p0 - 2.0 * p1 + p2
    inside = index.gt(0) & index.lt(bank_size - 1) & curvature.lt(-1e-9)
    offset = torch.where(inside, (0.5 * (p0 - p2) / curvature).clamp(-0.5, 0.5),
                         torch.zeros_like(p1))
    frequencies = (log_omega.index_select(0, index.flatten()).view_as(p1) + offset * step).exp()
    found = top.gt(0.0)
    frequencies = torch.where(found, frequencies, torch.ones_like(frequencies))
    weights = torch.where(found, top, torch.zeros_like(top))
    if k < peaks:
        frequencies = torch.cat([frequencies, torch.ones([b, dx, peaks - k], device=xc.device)], 2)
        weights = torch.cat([weights, torch.zeros([b, dx, peaks - k], device=xc.device)], 2)
    return frequencies, weights
