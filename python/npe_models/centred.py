"""centre_per_task (core/src/models/model.cpp, ContextCentre): the model sees each task's outputs
centred on its context's own mean (per output; 0 without context), and its predictions are
moved back. load() wraps the kind's module in one of these when the option is on; the weights
are the wrapped module's."""

from typing import Tuple

import torch
from torch import nn


def context_mean(yc: torch.Tensor) -> torch.Tensor:
    """[B, 1, Dy] in float64."""
    if yc.shape[1] == 0:
        return yc.new_zeros([yc.shape[0], 1, yc.shape[2]], dtype=torch.float64)
    return yc.to(torch.float64).mean(1, keepdim=True)


class CentredPerTask(nn.Module):
    """A model of (mean, std) with centre_per_task."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        centre = context_mean(yc)
        out = self.model(xc, (yc.to(torch.float64) - centre).to(yc.dtype), xt)
        return (out[0].to(torch.float64) + centre).to(out[0].dtype), out[1]


class CentredPerTaskJoint(nn.Module):
    """A model of (mean, std, covariance) with centre_per_task: the covariance is unchanged."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        centre = context_mean(yc)
        out = self.model(xc, (yc.to(torch.float64) - centre).to(yc.dtype), xt)
        return (out[0].to(torch.float64) + centre).to(out[0].dtype), out[1], out[2]
