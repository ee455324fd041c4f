"""PT-TNP and TE-PT-TNP (paper Sections 2.3 and 3.1; core/src/models/kinds/pttnp/pttnp.cpp):
M learned pseudo-tokens; per layer the pseudo-tokens attend to the context, the context to the
pseudo-tokens (not in the last layer, whose context tokens nobody reads) and the targets to the
pseudo-tokens. The TE version's pseudo-tokens carry pseudo-locations, a learned offset plus a
convex combination of the context locations (eq. 11) or their mean."""

import math
from typing import Tuple

import torch
from torch import nn

from .common import (AttentionBlock, gaussian_head, input_output_token_inputs, model_inputs,
                     output_only_token_inputs, token_embedder)
from .te_attention import TeAttentionBlock

PTTNP_OPTIONS = ("dim_x", "dim_y", "dim_features", "dim_model", "num_layers", "num_heads",
                 "head_dim", "num_pseudo_tokens", "heteroscedastic", "min_stddev", "input_scale")
TEPTTNP_OPTIONS = PTTNP_OPTIONS + ("pairwise_width", "distance_frequencies", "update_locations",
                                   "place_features", "pseudo_locations")


class PtLayer(nn.Module):
    def __init__(self, pseudo_from_context: AttentionBlock, context_from_pseudo: AttentionBlock,
                 target_from_pseudo: AttentionBlock):
        super().__init__()
        self.pseudo_from_context = pseudo_from_context
        self.context_from_pseudo = context_from_pseudo
        self.target_from_pseudo = target_from_pseudo

    def forward(self, u: torch.Tensor, zc: torch.Tensor,
                zt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        u = self.pseudo_from_context(u, zc)
        zc = self.context_from_pseudo(zc, u)
        return u, zc, self.target_from_pseudo(zt, u)


class PtLastLayer(nn.Module):
    def __init__(self, pseudo_from_context: AttentionBlock, target_from_pseudo: AttentionBlock):
        super().__init__()
        self.pseudo_from_context = pseudo_from_context
        self.target_from_pseudo = target_from_pseudo

    def forward(self, u: torch.Tensor, zc: torch.Tensor,
                zt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        u = self.pseudo_from_context(u, zc)
        return u, zc, self.target_from_pseudo(zt, u)


class PTTNP(nn.Module):
    def __init__(self, options: dict):
        super().__init__()
        dx, dy, dz = options["dim_x"], options["dim_y"], options["dim_model"]
        self.dim_y = dy
        self.input_scale = float(options["input_scale"])
        self.dim_coordinates = dx - options["dim_features"]
        self.embed = token_embedder(dx + dy + 1, dz)
        self.pseudo_tokens = nn.Parameter(torch.zeros([options["num_pseudo_tokens"], dz]))

        def block():
            return AttentionBlock(dz, options["num_heads"], options["head_dim"])
        n = options["num_layers"]
        self.layers = nn.ModuleList([
            PtLayer(block(), block(), block()) if l + 1 < n else PtLastLayer(block(), block())
            for l in range(n)])
        self.head = gaussian_head(dz, dz, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, False, self.input_scale, self.dim_coordinates)
        context, targets = input_output_token_inputs(xc, yc, xt)
        zc, zt = self.embed(context), self.embed(targets)
        u = self.pseudo_tokens.unsqueeze(0).expand(xc.shape[0], -1, -1)
        for layer in self.layers:
            u, zc, zt = layer(u, zc, zt)
        return self.head(zt)


class TePtLayer(nn.Module):
    def __init__(self, pseudo_from_context: TeAttentionBlock,
                 context_from_pseudo: TeAttentionBlock, target_from_pseudo: TeAttentionBlock):
        super().__init__()
        self.pseudo_from_context = pseudo_from_context
        self.context_from_pseudo = context_from_pseudo
        self.target_from_pseudo = target_from_pseudo

    def forward(self, u: torch.Tensor, v: torch.Tensor, zc: torch.Tensor, xc: torch.Tensor,
                zt: torch.Tensor, xt: torch.Tensor
                ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                           torch.Tensor]:
        u, v = self.pseudo_from_context(u, v, zc, xc)
        zc, xc = self.context_from_pseudo(zc, xc, u, v)
        zt, xt = self.target_from_pseudo(zt, xt, u, v)
        return u, v, zc, xc, zt, xt


class TePtLastLayer(nn.Module):
    def __init__(self, pseudo_from_context: TeAttentionBlock,
                 target_from_pseudo: TeAttentionBlock):
        super().__init__()
        self.pseudo_from_context = pseudo_from_context
        self.target_from_pseudo = target_from_pseudo

    def forward(self, u: torch.Tensor, v: torch.Tensor, zc: torch.Tensor, xc: torch.Tensor,
                zt: torch.Tensor, xt: torch.Tensor
                ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                           torch.Tensor]:
        u, v = self.pseudo_from_context(u, v, zc, xc)
        zt, xt = self.target_from_pseudo(zt, xt, u, v)
        return u, v, zc, xc, zt, xt


class TEPTTNP(nn.Module):
    def __init__(self, options: dict):
        super().__init__()
        dx, dy, dz = options["dim_x"], options["dim_y"], options["dim_model"]
        if options["place_features"] not in ("tokens", "differences"):
            raise ValueError("model.json's place_features is %r, not 'tokens' or 'differences'" %
                             options["place_features"])
        if options["pseudo_locations"] not in ("attention", "context_mean"):
            raise ValueError("model.json's pseudo_locations is %r, not 'attention' or "
                             "'context_mean'" %
                             options["pseudo_locations"])
        differences = options["place_features"] == "differences"
        self.token_features = 0 if differences else options["dim_features"]
        pairwise_dims = dx if differences else dx - options["dim_features"]
        self.dim_y = dy
        self.dim_model = dz
        self.input_scale = float(options["input_scale"])
        self.dim_inputs = dx - options["dim_features"]
        self.embed = token_embedder(dy + self.token_features + 1, dz)
        m = options["num_pseudo_tokens"]
        self.pseudo_tokens = nn.Parameter(torch.zeros([m, dz]))
        self.pseudo_offsets = nn.Parameter(torch.zeros([m, pairwise_dims]))
        self.attention_locations = options["pseudo_locations"] == "attention"
        if self.attention_locations:
            self.psi_query = nn.Linear(dz, dz)
            self.psi_key = nn.Linear(dz, dz)
        else:
            self.psi_query = nn.Identity()
            self.psi_key = nn.Identity()
        update = bool(options["update_locations"])

        def block(update_locations):
            return TeAttentionBlock(dz, options["num_heads"], options["head_dim"], pairwise_dims,
                                    options["pairwise_width"], options["distance_frequencies"],
                                    update_locations)
        n = options["num_layers"]
        self.layers = nn.ModuleList([
            TePtLayer(block(update), block(update), block(update)) if l + 1 < n
            else TePtLastLayer(block(update), block(False))
            for l in range(n)])
        self.head = gaussian_head(dz, dz, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, True, self.input_scale, self.dim_inputs)
        b, nc, nt = xc.shape[0], xc.shape[1], xt.shape[1]
        context, targets, xc, xt = output_only_token_inputs(xc, yc, xt, self.dim_y,
                                                            self.token_features)
        zc = self.embed(context)
        zt = self.embed(targets)
        if self.token_features == 0:
            zt = zt.expand(b, nt, self.dim_model)  # every target the same token
        u = self.pseudo_tokens.unsqueeze(0).expand(b, -1, -1)
        # Pseudo-locations that translate exactly with the data (eq. 11, or the context mean;
        # without context the targets' mean).
        offsets = self.pseudo_offsets.unsqueeze(0)
        if nc > 0 and not self.attention_locations:
            v = offsets + xc.mean(1, keepdim=True)
        elif nc > 0:
            logits = self.psi_query(u).matmul(self.psi_key(zc).transpose(1, 2)) / \
                math.sqrt(float(self.dim_model))
            v = offsets + torch.softmax(logits, -1).matmul(xc)
        elif nt > 0:
            v = offsets + xt.mean(1, keepdim=True)
        else:
            v = offsets.expand(b, -1, -1)
        for layer in self.layers:
            u, v, zc, xc, zt, xt = layer(u, v, zc, xc, zt, xt)
        return self.head(zt)
