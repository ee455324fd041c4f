"""TNP-ND and TE-TNP-ND (core/src/models/kinds/tnpnd/tnpnd.cpp): the TNP-D or TE-TNP encoder with
the non-diagonal head (nd_head.py). forward returns (mean, std, covariance), the covariance
[B, Nt*Dy, Nt*Dy] over the targets, target-major."""

from typing import Tuple

import torch
from torch import nn

from . import nd_head
from .common import AttentionBlock, model_inputs
from .te_attention import TeAttentionBlock
from .tetnp import TeTnpBase
from .tetnp import OPTIONS as TETNP_OPTIONS
from .tnpd import TnpdBase
from .tnpd import OPTIONS as TNPD_OPTIONS

TNPND_OPTIONS = tuple(o for o in TNPD_OPTIONS if o != "heteroscedastic") + nd_head.OPTIONS
TETNPND_OPTIONS = tuple(o for o in TETNP_OPTIONS if o != "heteroscedastic") + nd_head.OPTIONS


class TNPND(TnpdBase):
    def __init__(self, options: dict):
        super().__init__(options)
        nd_head.check_covariance(options)
        dz = options["dim_model"]
        self.dim_y_out = options["dim_y"]
        self.low_rank = options["covariance"] == "lowrank"
        self.projection_dim = options["projection_dim"]
        self.min_stddev = float(options["min_stddev"])
        self.per_value = self.projection_dim + (1 if self.low_rank else 0)
        self.mean = nd_head.mean_mlp(options)
        self.covariance_layers = nn.ModuleList([
            AttentionBlock(dz, options["num_heads"], options["head_dim"])
            for _ in range(options["covariance_layers"])])
        self.projection = nd_head.projection_mlp(options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, False, self.input_scale, self.dim_coordinates)
        zt = self.encode(xc, yc, xt)
        mean = self.mean(zt)
        if zt.shape[1] == 0:
            return nd_head.empty_joint(mean)
        z = zt
        for layer in self.covariance_layers:
            z = layer(z, z)
        h = self.projection(z).reshape(zt.shape[0], zt.shape[1] * self.dim_y_out,
                                       self.per_value).to(torch.float64)
        return nd_head.joint_gaussian(mean, h, self.low_rank, self.projection_dim,
                                      self.min_stddev)


class TETNPND(TeTnpBase):
    def __init__(self, options: dict):
        super().__init__(options, target_locations=True)
        nd_head.check_covariance(options)
        dz = options["dim_model"]
        self.dim_y_out = options["dim_y"]
        self.input_scale = float(options["input_scale"])
        self.dim_inputs = options["dim_x"] - options["dim_features"]
        self.low_rank = options["covariance"] == "lowrank"
        self.projection_dim = options["projection_dim"]
        self.min_stddev = float(options["min_stddev"])
        self.per_value = self.projection_dim + (1 if self.low_rank else 0)
        self.mean = nd_head.mean_mlp(options)
        differences = options["place_features"] == "differences"
        pairwise_dims = options["dim_x"] if differences else \
            options["dim_x"] - options["dim_features"]
        layers = options["covariance_layers"]
        self.covariance_layers = nn.ModuleList([
            TeAttentionBlock(dz, options["num_heads"], options["head_dim"], pairwise_dims,
                             options["pairwise_width"], options["distance_frequencies"],
                             bool(options["update_locations"]) and l + 1 < layers)
            for l in range(layers)])
        self.projection = nd_head.projection_mlp(options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, True, self.input_scale, self.dim_inputs)
        zt, x = self.encode(xc, yc, xt)
        mean = self.mean(zt)
        if zt.shape[1] == 0:
            return nd_head.empty_joint(mean)
        z = zt
        for layer in self.covariance_layers:
            z, x = layer(z, x, z, x)
        h = self.projection(z).reshape(zt.shape[0], zt.shape[1] * self.dim_y_out,
                                       self.per_value).to(torch.float64)
        return nd_head.joint_gaussian(mean, h, self.low_rank, self.projection_dim,
                                      self.min_stddev)
