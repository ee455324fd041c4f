"""CNP (Garnelo et al. 2018) as core/src/models/kinds/cnp/cnp.cpp builds it: r is the mean over
the context of an MLP with five hidden layers of width D_z on (x, y); the head reads [r, x_t]."""

from typing import Tuple

import torch
from torch import nn

from .common import Mlp, gaussian_head, model_inputs

OPTIONS = ("dim_x", "dim_y", "dim_features", "dim_model", "heteroscedastic", "min_stddev",
           "input_scale")


class CNP(nn.Module):
    def __init__(self, options: dict):
        super().__init__()
        dx, dy, dz = options["dim_x"], options["dim_y"], options["dim_model"]
        self.dim_model = dz
        self.input_scale = float(options["input_scale"])
        self.dim_coordinates = dx - options["dim_features"]
        self.encoder = Mlp(dx + dy, [dz] * 5, dz)
        self.head = gaussian_head(dz + dx, dz, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, False, self.input_scale, self.dim_coordinates)
        b, nt = xt.shape[0], xt.shape[1]
        if xc.shape[1] == 0:
            r = torch.zeros([b, self.dim_model], dtype=xt.dtype, device=xt.device)
        else:
            r = self.encoder(torch.cat([xc, yc], -1)).mean(1)
        rt = r.unsqueeze(1).expand(b, nt, self.dim_model)
        return self.head(torch.cat([rt, xt], -1))
