"""Building blocks shared by the model kinds, as core/src/models/modules.cpp and tokens.h define
them. Parameter names follow libtorch's registration there, so that an exported state_dict loads
with strict=True."""

import math
from typing import List, Optional, Tuple

import torch
from torch import nn


class Mlp(nn.Module):
    """Linear layers with ReLU between them (modules.cpp: MlpImpl, whose layers npe names
    linear0, linear1, ...: loading.py maps those names onto layers.0, layers.1, ...)."""

    def __init__(self, dim_in: int, hidden: List[int], dim_out: int):
        super().__init__()
        widths = [dim_in] + list(hidden) + [dim_out]
        self.layers = nn.ModuleList(
            [nn.Linear(widths[i], widths[i + 1]) for i in range(len(widths) - 1)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < last:
                x = torch.relu(x)
        return x


class HeteroscedasticHead(nn.Module):
    """An MLP with two hidden layers to the mean and the raw scale of each output; the standard
    deviation is min_stddev + sqrt(softplus(raw)) (modules.cpp: GaussianHeadImpl)."""

    def __init__(self, dim_in: int, hidden: int, dim_y: int, min_stddev: float):
        super().__init__()
        self.dim_y = dim_y
        self.min_stddev = min_stddev
        self.mlp = Mlp(dim_in, [hidden, hidden], 2 * dim_y)

    def forward(self, z: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        out = self.mlp(z)
        mean = out[..., :self.dim_y]
        raw = out[..., self.dim_y:]
        return mean, self.min_stddev + torch.sqrt(nn.functional.softplus(raw))


class HomoscedasticHead(nn.Module):
    """An MLP with two hidden layers to the mean; one learned noise level per output,
    min_stddev + exp(log_noise) (modules.cpp: GaussianHeadImpl)."""

    def __init__(self, dim_in: int, hidden: int, dim_y: int, min_stddev: float):
        super().__init__()
        self.min_stddev = min_stddev
        self.mlp = Mlp(dim_in, [hidden, hidden], dim_y)
        self.log_noise = nn.Parameter(torch.full([dim_y], math.log(0.1)))

    def forward(self, z: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        mean = self.mlp(z)
        return mean, (self.min_stddev + self.log_noise.exp()).expand_as(mean)


def gaussian_head(dim_in: int, hidden: int, options: dict) -> nn.Module:
    """The Gaussian head a model's options ask for."""
    head = HeteroscedasticHead if options["heteroscedastic"] else HomoscedasticHead
    return head(dim_in, hidden, options["dim_y"], float(options["min_stddev"]))


class MultiHeadAttention(nn.Module):
    """Scaled dot-product attention with bias-free q, k, v projections and a biased output
    projection (modules.cpp: MultiHeadAttentionImpl)."""

    def __init__(self, dim_model: int, num_heads: int, head_dim: int):
        super().__init__()
        inner = num_heads * head_dim
        self.heads = num_heads
        self.head_dim = head_dim
        self.q = nn.Linear(dim_model, inner, bias=False)
        self.k = nn.Linear(dim_model, inner, bias=False)
        self.v = nn.Linear(dim_model, inner, bias=False)
        self.out = nn.Linear(inner, dim_model)

    def forward(self, zq: torch.Tensor, zk: torch.Tensor) -> torch.Tensor:
        b, nq, nk = zq.shape[0], zq.shape[1], zk.shape[1]
        if nk == 0:
            return torch.zeros_like(zq)
        q = self.q(zq).view(b, nq, self.heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.k(zk).view(b, nk, self.heads, self.head_dim).permute(0, 2, 1, 3)
        v = self.v(zk).view(b, nk, self.heads, self.head_dim).permute(0, 2, 1, 3)
        logits = q.matmul(k.transpose(-1, -2)) / math.sqrt(float(self.head_dim))
        attention = torch.softmax(logits, -1)
        out = attention.matmul(v).permute(0, 2, 1, 3).reshape(b, nq, self.heads * self.head_dim)
        return self.out(out)


class AttentionBlock(nn.Module):
    """Pre-norm attention with one layer norm for the queries and one for the keys, then a
    feed-forward MLP of one hidden layer (modules.cpp: AttentionBlockImpl)."""

    def __init__(self, dim_model: int, num_heads: int, head_dim: int):
        super().__init__()
        self.norm_q = nn.LayerNorm(dim_model)
        self.norm_k = nn.LayerNorm(dim_model)
        self.norm_ff = nn.LayerNorm(dim_model)
        self.attention = MultiHeadAttention(dim_model, num_heads, head_dim)
        self.feed_forward = Mlp(dim_model, [dim_model], dim_model)

    def forward(self, zq: torch.Tensor, zk: torch.Tensor) -> torch.Tensor:
        z = zq + self.attention(self.norm_q(zq), self.norm_k(zk))
        return z + self.feed_forward(self.norm_ff(z))


def token_embedder(dim_in: int, dim_model: int) -> Mlp:
    """The transformer NPs' token embedder: two hidden layers of width D_z (tokens.h)."""
    return Mlp(dim_in, [dim_model, dim_model], dim_model)


def model_inputs(xc: torch.Tensor, yc: torch.Tensor, xt: torch.Tensor,
                 translation_equivariant: bool, input_scale: float,
                 dim_coordinates: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What npe's models see (model.cpp: NeuralProcessImpl::model_inputs): the coordinates in
    float64, moved by a whole-number reference (the context's mean, else the targets') for a
    translation-equivariant model, so that float32 keeps their digits at any shift; scaled by
    input_scale; then float32. Place features (inputs after dim_coordinates) are left as they
    are."""
    xc = xc.to(torch.float64).clone()
    xt = xt.to(torch.float64).clone()
    dc = dim_coordinates
    if translation_equivariant:
        if xc.shape[1] > 0:
            reference = xc[..., :dc].mean(1, keepdim=True).round()
            xc[..., :dc] -= reference
            xt[..., :dc] -= reference
        elif xt.shape[1] > 0:
            reference = xt[..., :dc].mean(1, keepdim=True).round()
            xc[..., :dc] -= reference
            xt[..., :dc] -= reference
    if input_scale != 1.0:
        xc[..., :dc] *= input_scale
        xt[..., :dc] *= input_scale
    return xc.to(torch.float32), yc.to(torch.float32), xt.to(torch.float32)


def output_only_token_inputs(xc: torch.Tensor, yc: torch.Tensor, xt: torch.Tensor, dim_y: int,
                             features: int
                             ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The inputs of translation-equivariant tokens (tokens.h: output_only_tokens), and the
    inputs cut to their coordinates: context [y, 0] and every target the one token [0, 1]
    (returned once, [Dy + 1]: embed it and expand); with `features` place features (the last
    inputs), context [y, f, 0] and targets [0, f, 1], one per target."""
    b, nc, nt = xc.shape[0], xc.shape[1], xt.shape[1]
    if features > 0:
        first = xc.shape[-1] - features
        context = torch.cat([yc, xc[..., first:], xc.new_zeros([b, nc, 1])], -1)
        targets = torch.cat([xt.new_zeros([b, nt, dim_y]), xt[..., first:],
                             xt.new_ones([b, nt, 1])], -1)
        return context, targets, xc[..., :first], xt[..., :first]
    context = torch.cat([yc, xc.new_zeros([b, nc, 1])], -1)
    return context, torch.cat([xt.new_zeros([dim_y]), xt.new_ones([1])]), xc, xt


def input_output_token_inputs(xc: torch.Tensor, yc: torch.Tensor,
                              xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The inputs of TNP tokens (tokens.h: input_output_tokens): context [x, y, 1], targets
    [x, 0, 0]."""
    b, nc, nt = xc.shape[0], xc.shape[1], xt.shape[1]
    return (torch.cat([xc, yc, xc.new_ones([b, nc, 1])], -1),
            torch.cat([xt, xt.new_zeros([b, nt, yc.shape[-1] + 1])], -1))
