"""BSA-TNP (Jenson et al.; core/src/models/kinds/bsatnp/bsatnp.cpp): tokens of the outputs only,
and attention whose logits get a translation-invariant bias per head, an RBF network of the
squared distance between query and key locations (core/src/models/kernels/biased_attention.h),
sum_f a_f exp(-b_f ||x_q - x_k||^2); with time_bias_features, separate biases over space (all
inputs but the last) and time (the last). npe computes it over chunks of keys with an online
softmax; this module forms the weights in one piece, which gives the same numbers."""

import math
from typing import Tuple

import torch
from torch import nn

from .common import Mlp, gaussian_head, model_inputs, output_only_token_inputs, token_embedder

OPTIONS = ("dim_x", "dim_y", "dim_features", "dim_model", "num_layers", "num_heads", "head_dim",
           "share_layer_weights", "bias_features", "time_bias_features", "heteroscedastic",
           "min_stddev", "input_scale")


def rbf_bias(xq: torch.Tensor, xk: torch.Tensor, amplitudes: torch.Tensor,
             rates: torch.Tensor) -> torch.Tensor:
    """[B,H,Nq,Nk]: sum_f a[h,f] exp(-rates[h,f] ||x_q - x_k||^2)."""
    d2 = (xq.unsqueeze(2) - xk.unsqueeze(1)).square().sum(-1)  # [B,Nq,Nk]
    terms = torch.exp(-d2.unsqueeze(1).unsqueeze(-1) * rates.view(1, rates.shape[0], 1, 1, -1))
    return (terms * amplitudes.view(1, amplitudes.shape[0], 1, 1, -1)).sum(-1)


class BiasedAttentionBlock(nn.Module):
    def __init__(self, dim_model: int, num_heads: int, head_dim: int, bias_features: int,
                 time_bias_features: int):
        super().__init__()
        inner = num_heads * head_dim
        self.heads = num_heads
        self.head_dim = head_dim
        self.time_features = time_bias_features
        self.norm_q = nn.LayerNorm(dim_model)
        self.norm_k = nn.LayerNorm(dim_model)
        self.norm_ff = nn.LayerNorm(dim_model)
        self.q = nn.Linear(dim_model, inner, bias=False)
        self.k = nn.Linear(dim_model, inner, bias=False)
        self.v = nn.Linear(dim_model, inner, bias=False)
        self.out = nn.Linear(inner, dim_model)
        features = bias_features + time_bias_features
        self.log_rates = nn.Parameter(torch.zeros([num_heads, features]))
        self.amplitudes = nn.Parameter(torch.ones([num_heads, features]))
        self.feed_forward = Mlp(dim_model, [dim_model], dim_model)

    def bias(self, xq: torch.Tensor, xk: torch.Tensor) -> torch.Tensor:
        rates = self.log_rates.exp()
        t = self.time_features
        if t == 0:
            return rbf_bias(xq, xk, self.amplitudes, rates)
        f = self.amplitudes.shape[1] - t
        return rbf_bias(xq[..., :-1], xk[..., :-1], self.amplitudes[:, :f], rates[:, :f]) + \
            rbf_bias(xq[..., -1:], xk[..., -1:], self.amplitudes[:, f:], rates[:, f:])

    def forward(self, zq: torch.Tensor, xq: torch.Tensor, zk: torch.Tensor,
                xk: torch.Tensor) -> torch.Tensor:
        b, nq, nk = zq.shape[0], zq.shape[1], zk.shape[1]
        qn, kn = self.norm_q(zq), self.norm_k(zk)
        if nk == 0:
            attended = zq.new_zeros([b, nq, self.heads * self.head_dim])
        else:
            q = self.q(qn).view(b, nq, self.heads, self.head_dim).permute(0, 2, 1, 3)
            k = self.k(kn).view(b, nk, self.heads, self.head_dim).permute(0, 2, 1, 3)
            v = self.v(kn).view(b, nk, self.heads, self.head_dim).permute(0, 2, 1, 3)
            logits = q.matmul(k.transpose(2, 3)) * (1.0 / math.sqrt(float(self.head_dim)))
            weights = torch.softmax(logits + self.bias(xq, xk), -1)
            attended = weights.matmul(v).permute(0, 2, 1, 3).reshape(
                b, nq, self.heads * self.head_dim)
        z = zq + self.out(attended)
        return z + self.feed_forward(self.norm_ff(z))


class BsaLayer(nn.Module):
    def __init__(self, self_block: BiasedAttentionBlock, cross_block: BiasedAttentionBlock):
        super().__init__()
        self.self_block = self_block
        self.cross_block = cross_block

    def forward(self, zc: torch.Tensor, xc: torch.Tensor, zt: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        zc = self.self_block(zc, xc, zc, xc)
        return zc, self.cross_block(zt, xt, zc, xc)


class BsaSharedLayer(nn.Module):
    """share_layer_weights: the context self-attention and the target cross-attention are one
    block (Jenson et al.'s shared weights)."""

    def __init__(self, block: BiasedAttentionBlock):
        super().__init__()
        self.self_block = block

    def forward(self, zc: torch.Tensor, xc: torch.Tensor, zt: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        zc = self.self_block(zc, xc, zc, xc)
        return zc, self.self_block(zt, xt, zc, xc)


class BSATNP(nn.Module):
    def __init__(self, options: dict):
        super().__init__()
        dy, dz = options["dim_y"], options["dim_model"]
        self.dim_y = dy
        self.dim_model = dz
        self.features = options["dim_features"]
        self.input_scale = float(options["input_scale"])
        self.dim_inputs = options["dim_x"] - options["dim_features"]
        self.embed = token_embedder(dy + self.features + 1, dz)

        def block():
            return BiasedAttentionBlock(dz, options["num_heads"], options["head_dim"],
                                        options["bias_features"], options["time_bias_features"])
        shared = bool(options["share_layer_weights"])
        self.layers = nn.ModuleList([
            BsaSharedLayer(block()) if shared else BsaLayer(block(), block())
            for _ in range(options["num_layers"])])
        self.head = gaussian_head(dz, dz, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, True, self.input_scale, self.dim_inputs)
        b, nt = xt.shape[0], xt.shape[1]
        context, targets, xc, xt = output_only_token_inputs(xc, yc, xt, self.dim_y,
                                                            self.features)
        zc = self.embed(context)
        zt = self.embed(targets)
        if self.features == 0:
            zt = zt.expand(b, nt, self.dim_model)  # every target the same token
        for layer in self.layers:
            zc, zt = layer(zc, xc, zt, xt)
        return self.head(zt)
