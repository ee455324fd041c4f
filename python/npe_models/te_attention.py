"""Translation-equivariant attention (paper Section 3; core/src/models/modules.cpp,
TeMultiHeadAttentionImpl's plain path): the attention weight of each pair is an MLP (rho) of the
heads' dot products and the inputs' difference x_q - x_k, never of the inputs themselves, and
the locations may be updated as in eq. 10."""

import math
from typing import Optional, Tuple

import torch
from torch import nn

from .common import Mlp


class TeMultiHeadAttention(nn.Module):
    def __init__(self, dim_model: int, num_heads: int, head_dim: int, dim_x: int,
                 pairwise_width: int, distance_frequencies: int, update_locations: bool,
                 context_frequencies: int = 0):
        super().__init__()
        inner = num_heads * head_dim
        self.heads = num_heads
        self.head_dim = head_dim
        self.update_locations = update_locations
        self.fourier = distance_frequencies > 0
        self.q = nn.Linear(dim_model, inner, bias=False)
        self.k = nn.Linear(dim_model, inner, bias=False)
        self.v = nn.Linear(dim_model, inner, bias=False)
        self.out = nn.Linear(inner, dim_model)
        self.rho_dots = nn.Linear(num_heads, pairwise_width)
        self.rho_dx = nn.Linear(dim_x, pairwise_width, bias=False)
        self.rho_hidden = nn.Linear(pairwise_width, pairwise_width)
        self.rho_out = nn.Linear(pairwise_width, num_heads)
        # Fourier features of the differences (distance_frequencies > 0) and the location
        # update's phi exist only where the model has them: strict loading checks that.
        if self.fourier:
            self.rho_fourier = nn.Linear(2 * dim_x * distance_frequencies, pairwise_width,
                                         bias=False)
            self.rho_frequencies = nn.Parameter(torch.zeros([distance_frequencies]))
        else:
            self.rho_fourier = nn.Identity()
            self.register_buffer("rho_frequencies", torch.zeros([0]), persistent=False)
        # The context's own peaks (context_frequencies > 0; context_spectrum.py), weighted.
        self.spectrum = context_frequencies > 0
        if self.spectrum:
            self.rho_spectrum = nn.Linear(2 * dim_x * context_frequencies, pairwise_width,
                                          bias=False)
        else:
            self.rho_spectrum = nn.Identity()
        if update_locations:
            self.phi = Mlp(num_heads, [pairwise_width, pairwise_width], 1)
        else:
            self.phi = nn.Identity()

    def forward(self, zq: torch.Tensor, xq: torch.Tensor, zk: torch.Tensor, xk: torch.Tensor,
                spectrum: Optional[Tuple[torch.Tensor, torch.Tensor]] = None
                ) -> Tuple[torch.Tensor, torch.Tensor]:
        b, nq, nk = zq.shape[0], zq.shape[1], zk.shape[1]
        if nk == 0:
            return torch.zeros_like(zq), xq
        q = self.q(zq).view(b, nq, self.heads, self.head_dim)
        k = self.k(zk).view(b, nk, self.heads, self.head_dim).permute(0, 2, 1, 3)
        v = self.v(zk).view(b, nk, self.heads, self.head_dim).permute(0, 2, 1, 3)
        # [B,H,Nq,Nk] -> [B,Nq,Nk,H]: the pairwise MLP works on the last dimension.
        dots = (q.permute(0, 2, 1, 3).matmul(k.transpose(-1, -2)) /
                math.sqrt(float(self.head_dim))).permute(0, 2, 3, 1)
        diff = xq.unsqueeze(2) - xk.unsqueeze(1)
        hidden = self.rho_dots(dots) + self.rho_dx(diff)
        if self.fourier:
            phase = diff.unsqueeze(-1) * self.rho_frequencies  # [B,Nq,Nk,Dx,F]
            hidden = hidden + self.rho_fourier(
                torch.cat([phase.cos(), phase.sin()], -1).flatten(-2))
        if self.spectrum and spectrum is not None:
            frequencies, weights = spectrum
            shape = [b, 1, 1, diff.shape[3], frequencies.shape[2]]
            phase = diff.unsqueeze(-1) * frequencies.view(shape)  # [B,Nq,Nk,Dx,J]
            weight = weights.view(shape)
            hidden = hidden + self.rho_spectrum(
                torch.cat([phase.cos() * weight, phase.sin() * weight], -1).flatten(-2))
        hidden = torch.relu(self.rho_hidden(torch.relu(hidden)))
        alpha = torch.softmax(self.rho_out(hidden), 2)
        weights = alpha.permute(0, 3, 1, 2)
        attended = weights.matmul(v).permute(0, 2, 1, 3).reshape(b, nq, self.heads * self.head_dim)
        x = xq
        if self.update_locations:
            # Eq. 10: x_n + (1/Nk) sum_m (x_n - x_m) phi(alpha_nm).
            x = xq + (diff * self.phi(alpha)).mean(2)
        return self.out(attended), x


class TeAttentionBlock(nn.Module):
    """Pre-norm TE attention (queries and keys each normalised by their own layer norm), then a
    feed-forward MLP of one hidden layer (modules.cpp: TeAttentionBlockImpl)."""

    def __init__(self, dim_model: int, num_heads: int, head_dim: int, dim_x: int,
                 pairwise_width: int, distance_frequencies: int, update_locations: bool,
                 context_frequencies: int = 0):
        super().__init__()
        self.norm_q = nn.LayerNorm(dim_model)
        self.norm_k = nn.LayerNorm(dim_model)
        self.norm_ff = nn.LayerNorm(dim_model)
        self.attention = TeMultiHeadAttention(dim_model, num_heads, head_dim, dim_x,
                                              pairwise_width, distance_frequencies,
                                              update_locations, context_frequencies)
        self.feed_forward = Mlp(dim_model, [dim_model], dim_model)

    def forward(self, zq: torch.Tensor, xq: torch.Tensor, zk: torch.Tensor, xk: torch.Tensor,
                spectrum: Optional[Tuple[torch.Tensor, torch.Tensor]] = None
                ) -> Tuple[torch.Tensor, torch.Tensor]:
        attended, x = self.attention(self.norm_q(zq), xq, self.norm_k(zk), xk, spectrum)
        z = zq + attended
        return z + self.feed_forward(self.norm_ff(z)), x
