"""TNP as in the TE-TNP paper (core/src/models/kinds/tnp/tnp.cpp): context tokens MLP([x, y, 1]),
target tokens MLP([x, 0, 0]); per layer, self-attention among the context tokens and
cross-attention from the targets to them; a Gaussian head on the target tokens."""

from typing import Tuple

import torch
from torch import nn

from .common import (AttentionBlock, gaussian_head, input_output_token_inputs, model_inputs,
                     token_embedder)

OPTIONS = ("dim_x", "dim_y", "dim_features", "dim_model", "num_layers", "num_heads", "head_dim",
           "heteroscedastic", "min_stddev", "input_scale")


class TnpLayer(nn.Module):
    """One layer: the context attends to itself, then the targets attend to the context."""

    def __init__(self, dim_model: int, num_heads: int, head_dim: int):
        super().__init__()
        self.self_block = AttentionBlock(dim_model, num_heads, head_dim)
        self.cross_block = AttentionBlock(dim_model, num_heads, head_dim)

    def forward(self, zc: torch.Tensor, zt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        zc = self.self_block(zc, zc)
        return zc, self.cross_block(zt, zc)


class TNP(nn.Module):
    def __init__(self, options: dict):
        super().__init__()
        dx, dy, dz = options["dim_x"], options["dim_y"], options["dim_model"]
        heads, head_dim = options["num_heads"], options["head_dim"]
        self.dim_y = dy
        self.input_scale = float(options["input_scale"])
        self.dim_coordinates = dx - options["dim_features"]
        self.embed = token_embedder(dx + dy + 1, dz)
        self.layers = nn.ModuleList(
            [TnpLayer(dz, heads, head_dim) for _ in range(options["num_layers"])])
        self.head = gaussian_head(dz, dz, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, False, self.input_scale, self.dim_coordinates)
        context, targets = input_output_token_inputs(xc, yc, xt)
        zc, zt = self.embed(context), self.embed(targets)
        for layer in self.layers:
            zc, zt = layer(zc, zt)
        return self.head(zt)
