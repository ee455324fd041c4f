"""Simple relational CNP (paper F.1; core/src/models/kinds/rcnp/rcnp.cpp): e(x, D_c) = mean_c
phi(x - x_c, y_c), phi an MLP with five hidden layers whose first layer npe keeps split into its
x part (first_x, no bias) and its y part (first_y); the head decodes e alone. Translation
equivariant: the inputs enter only as differences."""

from typing import Tuple

import torch
from torch import nn

from .common import Mlp, gaussian_head, model_inputs

OPTIONS = ("dim_x", "dim_y", "dim_features", "dim_model", "heteroscedastic", "min_stddev",
           "input_scale")


class RCNP(nn.Module):
    def __init__(self, options: dict):
        super().__init__()
        dx, dy, dz = options["dim_x"], options["dim_y"], options["dim_model"]
        self.dim_model = dz
        self.input_scale = float(options["input_scale"])
        self.dim_coordinates = dx - options["dim_features"]
        self.first_x = nn.Linear(dx, dz, bias=False)
        self.first_y = nn.Linear(dy, dz)
        self.phi_rest = Mlp(dz, [dz] * 4, dz)
        self.head = gaussian_head(dz, dz, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, True, self.input_scale, self.dim_coordinates)
        b, nt = xt.shape[0], xt.shape[1]
        if xc.shape[1] == 0:
            return self.head(xt.new_zeros([b, nt, self.dim_model]))
        # W [x_t - x_c; y_c] = W_x x_t - W_x x_c + W_y y_c, as npe computes it.
        context_part = self.first_y(yc) - self.first_x(xc)
        first = self.first_x(xt).unsqueeze(2) + context_part.unsqueeze(1)
        return self.head(self.phi_rest(torch.relu(first)).mean(2))
