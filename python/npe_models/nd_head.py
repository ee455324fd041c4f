"""The non-diagonal head of TNP-ND (Nguyen & Grover, Section 3.3) and TE-TNP-ND, as
core/src/models/kinds/tnpnd/tnpnd.cpp builds it: the mean from an MLP on the target tokens; a
stack of self-attention layers over the target tokens (TE attention on the target locations for
TE-TNP-ND) and a projection to one vector h per target value, giving
 - "cholesky": Sigma = L L^T with L = lower(H H^T), its diagonal ||h_i||^2 + min_stddev (eq. 10);
 - "lowrank": Sigma = diag(exp d + min_stddev^2) + A A^T with [d_i, a_i] = h_i."""

from typing import Tuple

import torch

from .common import Mlp

OPTIONS = ("covariance", "covariance_layers", "projection_dim", "projection_layers",
           "min_stddev")


def check_covariance(options: dict):
    if options["covariance"] not in ("cholesky", "lowrank"):
        raise ValueError("model.json's covariance is %r, not 'cholesky' or 'lowrank'" %
                         options["covariance"])


def mean_mlp(options: dict) -> Mlp:
    dz = options["dim_model"]
    return Mlp(dz, [dz, dz], options["dim_y"])


def projection_mlp(options: dict) -> Mlp:
    dz = options["dim_model"]
    per_value = options["projection_dim"] + (1 if options["covariance"] == "lowrank" else 0)
    return Mlp(dz, [dz] * (options["projection_layers"] - 1), options["dim_y"] * per_value)


def joint_gaussian(mean: torch.Tensor, h: torch.Tensor, low_rank: bool, projection_dim: int,
                   min_stddev: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(mean, marginal std in the mean's dtype, covariance [B, Nt*Dy, Nt*Dy] in float64) from
    the projections h [B, Nt*Dy, per value] (float64), targets major."""
    if low_rank:
        bound = 15.0  # exp(d) stays within float64's range and away from 0
        log_diagonal = h[..., 0].clamp(-bound, bound)
        a = h[..., 1:1 + projection_dim]
        covariance = torch.diag_embed(log_diagonal.exp() + min_stddev * min_stddev) + \
            a.matmul(a.transpose(-1, -2))
        variance = log_diagonal.exp() + min_stddev * min_stddev + a.square().sum(-1)
        return mean, variance.sqrt().view(mean.shape).to(mean.dtype), covariance
    gram = h.matmul(h.transpose(-1, -2))
    diagonal = gram.diagonal(0, -2, -1) + min_stddev
    scale_tril = torch.tril(gram, -1) + torch.diag_embed(diagonal)
    stddev = scale_tril.square().sum(-1).sqrt().view(mean.shape).to(mean.dtype)
    return mean, stddev, scale_tril.matmul(scale_tril.transpose(-1, -2))


def empty_joint(mean: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    b = mean.shape[0]
    return mean, mean.clone(), torch.zeros([b, 0, 0], dtype=torch.float64, device=mean.device)
