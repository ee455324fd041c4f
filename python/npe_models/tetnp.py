"""TE-TNP (paper Section 3; core/src/models/kinds/tnp/tnp.cpp and tnp_encoders.cpp): tokens of
the outputs only (context MLP([y, 0]), every target MLP([0, 1]); with place features in the
tokens, MLP([y, f, 0]) and MLP([0, f, 1])); per layer, TE self-attention among the context and
TE cross-attention from the targets, the locations updated by eq. 10 where the model does."""

from typing import Optional, Tuple

import torch
from torch import nn

from .common import gaussian_head, model_inputs, output_only_token_inputs, token_embedder
from .context_spectrum import context_spectrum
from .te_attention import TeAttentionBlock

OPTIONS = ("dim_x", "dim_y", "dim_features", "dim_model", "num_layers", "num_heads", "head_dim",
           "pairwise_width", "distance_frequencies", "context_frequencies", "update_locations",
           "share_layer_weights",
           "place_features", "heteroscedastic", "min_stddev", "input_scale")


class TeTnpLayer(nn.Module):
    """One layer with a self-attention block of its own."""

    def __init__(self, self_block: TeAttentionBlock, cross_block: TeAttentionBlock):
        super().__init__()
        self.self_block = self_block
        self.cross_block = cross_block

    def forward(self, zc: torch.Tensor, xc: torch.Tensor, zt: torch.Tensor, xt: torch.Tensor,
                spectrum: Optional[Tuple[torch.Tensor, torch.Tensor]]
                ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        zc, xc = self.self_block(zc, xc, zc, xc, spectrum)
        zt, xt = self.cross_block(zt, xt, zc, xc, spectrum)
        return zc, xc, zt, xt


class TeTnpSharedLayer(nn.Module):
    """One layer whose self- and cross-attention share one block (share_layer_weights, as the
    authors' code does)."""

    def __init__(self, block: TeAttentionBlock):
        super().__init__()
        self.cross_block = block

    def forward(self, zc: torch.Tensor, xc: torch.Tensor, zt: torch.Tensor, xt: torch.Tensor,
                spectrum: Optional[Tuple[torch.Tensor, torch.Tensor]]
                ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        zc, xc = self.cross_block(zc, xc, zc, xc, spectrum)
        zt, xt = self.cross_block(zt, xt, zc, xc, spectrum)
        return zc, xc, zt, xt


class TeTnpBase(nn.Module):
    """The layers of TE-TNP and its relatives, which npe registers on the model itself (embed,
    self0, cross0, ...): encode() gives the target tokens after the last layer and their
    locations (updated where the model updates them)."""

    def __init__(self, options: dict, target_locations: bool):
        super().__init__()
        dz, dy = options["dim_model"], options["dim_y"]
        self.dim_model = dz
        self.dim_y = dy
        if options["place_features"] not in ("tokens", "differences"):
            raise ValueError("model.json's place_features is %r, not 'tokens' or 'differences'" %
                             options["place_features"])
        differences = options["place_features"] == "differences"
        # Where the place features go (tokens.h: place_feature_route).
        self.token_features = 0 if differences else options["dim_features"]
        pairwise_dims = options["dim_x"] if differences else \
            options["dim_x"] - options["dim_features"]
        self.embed = token_embedder(dy + self.token_features + 1, dz)
        layers = []
        num_layers = options["num_layers"]
        update = bool(options["update_locations"])
        shared = bool(options["share_layer_weights"])
        for l in range(num_layers):
            def block(update_locations):
                return TeAttentionBlock(dz, options["num_heads"], options["head_dim"],
                                        pairwise_dims, options["pairwise_width"],
                                        options["distance_frequencies"], update_locations,
                                        options["context_frequencies"])
            # The last cross-attention skips its unused location update unless the caller needs
            # the target locations or the block is shared with the self-attention.
            last = l + 1 == num_layers
            cross = block(update and (not last or target_locations or shared))
            layers.append(TeTnpSharedLayer(cross) if shared else TeTnpLayer(block(update), cross))
        self.layers = nn.ModuleList(layers)
        self.context_frequencies = int(options["context_frequencies"])

    def encode(self, xc: torch.Tensor, yc: torch.Tensor,
               xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        b, nt = xt.shape[0], xt.shape[1]
        context, targets, xc, xt = output_only_token_inputs(xc, yc, xt, self.dim_y,
                                                            self.token_features)
        zc = self.embed(context)
        zt = self.embed(targets)
        if self.token_features == 0:
            zt = zt.expand(b, nt, self.dim_model)  # every target the same token
        spectrum: Optional[Tuple[torch.Tensor, torch.Tensor]] = None
        if self.context_frequencies > 0:
            spectrum = context_spectrum(xc, yc, self.context_frequencies)
        for layer in self.layers:
            zc, xc, zt, xt = layer(zc, xc, zt, xt, spectrum)
        return zt, xt


class TETNP(TeTnpBase):
    def __init__(self, options: dict):
        super().__init__(options, target_locations=False)
        dz = options["dim_model"]
        self.input_scale = float(options["input_scale"])
        self.dim_inputs = options["dim_x"] - options["dim_features"]
        self.head = gaussian_head(dz, dz, options)

    def forward(self, xc: torch.Tensor, yc: torch.Tensor,
                xt: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        xc, yc, xt = model_inputs(xc, yc, xt, True, self.input_scale, self.dim_inputs)
        zt, _ = self.encode(xc, yc, xt)
        return self.head(zt)
