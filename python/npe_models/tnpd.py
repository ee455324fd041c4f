"""TNP-D (Nguyen & Grover, Section 3.2; core/src/models/kinds/tnpd/tnpd.cpp and tnp_encoders.cpp):
one stack of attention layers over the context and target tokens, every token attending to the
context only (the mask of eq. 8), targets independent given the context."""

from typing import Tuple

import torch
from torch import nn

from .common import (AttentionBlock, gaussian_head, input_output_token_inputs, model_inputs,
                     token_embedder)

OPTIONS = ("dim_x", "dim_y", "dim_features", "dim_model", "num_layers", "num_heads", "head_dim",
           "heteroscedastic", "min_stddev", "input_scale")


class TnpdBase(nn.Module):
    """The TNP-D encoder, which npe registers on the model itself (embed, layer0, ...)."""

    def __init__(self, options: dict):
        super().__init__()
        dx, dy, dz = options["dim_x"], options["dim_y"], options["dim_model"]
        self.dim_y = dy
        self.input_scale = float(options["input_scale"])
        self.dim_coordinates = dx - options["dim_features"]
        self.embed = token_embedder(dx + dy + 1, dz)
        self.layers = nn.ModuleList([
            AttentionBlock(dz, options["num_heads"], options["head_dim"])
            for _ in range(options["num_layers"])])

    def encode(self, xc: torch.Tensor, yc: torch.Tensor, xt: torch.Tensor) -> torch.Tensor:
        """Target tokens after the last layer."""
        nc = xc.shape[1]
        context, targets = input_output_token_inputs(xc, yc, xt)
        z = torch.cat([self.embed(context), self.embed(targets)], 1)
        for layer in self.layers:
            z = layer(z, z[:, :nc])
        return z[:, nc:]


class TNPD(TnpdBase):
    def __init__(self, options: dict):
        super().__init__(options)
        dz = options["dim_model"]
        self.head = gaussian_head(dz, dz, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, False, self.input_scale, self.dim_coordinates)
        return self.head(self.encode(xc, yc, xt))
