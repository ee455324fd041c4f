"""standardise_per_task (core/src/models/model.cpp, ContextScale): the model sees each task's
outputs standardised by its context's own mean and standard deviation (per output, population;
0 and 1 without context, a deviation of 1 for one point, a floor of 1e-3 added in quadrature),
and its predictions are mapped back. load() wraps the kind's module in one of these when the
option is on; the weights are the wrapped module's."""

from typing import Tuple

import torch
from torch import nn


def context_scale(yc: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(mean, scale), each [B, 1, Dy] in float64."""
    b, nc, dy = yc.shape[0], yc.shape[1], yc.shape[2]
    y = yc.to(torch.float64)
    if nc == 0:
        return y.new_zeros([b, 1, dy]), y.new_ones([b, 1, dy])
    mean = y.mean(1, keepdim=True)
    if nc == 1:
        return mean, torch.ones_like(mean)
    return mean, (y.var(1, unbiased=False, keepdim=True) + 1e-3 * 1e-3).sqrt()


class StandardisedPerTask(nn.Module):
    """A model of (mean, std) with standardise_per_task."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        mean, scale = context_scale(yc)
        out = self.model(xc, ((yc.to(torch.float64) - mean) / scale).to(yc.dtype), xt)
        return ((out[0].to(torch.float64) * scale + mean).to(out[0].dtype),
                (out[1].to(torch.float64) * scale).to(out[1].dtype))


class StandardisedPerTaskJoint(nn.Module):
    """A model of (mean, std, covariance) with standardise_per_task: the covariance of values
    n * Dy + d scales by scale_d scale_d'."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mean, scale = context_scale(yc)
        out = self.model(xc, ((yc.to(torch.float64) - mean) / scale).to(yc.dtype), xt)
        b, nt, dy = out[0].shape[0], out[0].shape[1], out[0].shape[2]
        rows = scale.expand(b, nt, dy).reshape(b, nt * dy, 1)
        return ((out[0].to(torch.float64) * scale + mean).to(out[0].dtype),
                (out[1].to(torch.float64) * scale).to(out[1].dtype),
                out[2] * rows * rows.transpose(1, 2))
