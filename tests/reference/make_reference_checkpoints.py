#!/usr/bin/env python3
"""Builds small 1-D TNP and TE-TNP models with the authors' own classes (../shared/reference),
saves them as their Lightning training would (a .ckpt dict with "state_dict" of "model.<name>"
entries and pickled hyper-parameters) and as a bare state_dict, and writes each model's
prediction on a fixed task, so the C++ import can be checked against the reference code.

    make_reference_checkpoints.py REFERENCE_DIR OUTPUT_DIR
    make_reference_checkpoints.py REFERENCE_DIR --check-export STATE_DICT KIND OUTPUT_JSON

The second form builds a fresh KIND (tnp, tetnp) of the same sizes, loads STATE_DICT (from
npe export-reference) into it with load_state_dict(strict=True) and writes its prediction on
the same task, so the export can be checked against the reference code.
"""

import functools
import json
import math
import os
import sys


def main():
    reference, out = sys.argv[1], sys.argv[2]
    sys.path[:0] = [os.path.join(reference, "tnp"), os.path.join(reference, "tetnp"),
                    os.path.join(reference, "official_bench", "shims")]
    import torch

    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        # torch 1.13 lacks it; the reference TNP calls it. Plain softmax attention.
        def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
            scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
            logits = (q @ k.transpose(-2, -1)) * scale
            if attn_mask is not None:
                logits = logits.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else logits + attn_mask
            return logits.softmax(-1) @ v
        torch.nn.functional.scaled_dot_product_attention = sdpa

    from tnp.likelihoods.gaussian import HeteroscedasticNormalLikelihood
    from tnp.models.tnp import TNP, TNPDecoder, TNPEncoder
    from tnp.networks.attention_layers import MultiHeadCrossAttentionLayer, MultiHeadSelfAttentionLayer
    from tnp.networks.mlp import MLP
    from tnp.networks.transformer import TNPTransformerEncoder
    from tetnp.models.tetnp import TETNP, TETNPEncoder
    from tetnp.networks.teattention_layers import MultiHeadCrossTEAttentionLayer
    from tetnp.networks.tetransformer import TETNPTransformerEncoder

    dz, heads, head_dim, layers, dx, dy = 32, 4, 8, 2, 1, 1
    layer_args = dict(embed_dim=dz, num_heads=heads, head_dim=head_dim, feedforward_dim=dz, norm_first=True)

    def decoder():
        return TNPDecoder(MLP(in_dim=dz, out_dim=2 * dy, num_layers=2, width=dz))

    def tnp():
        encoder = TNPEncoder(
            TNPTransformerEncoder(num_layers=layers, mhsa_layer=MultiHeadSelfAttentionLayer(**layer_args),
                                  mhca_layer=MultiHeadCrossAttentionLayer(**layer_args)),
            MLP(in_dim=1 + dy + dx, out_dim=dz, num_layers=2, width=dz))
        return TNP(encoder, decoder(), HeteroscedasticNormalLikelihood())

    def tetnp():
        kernel = MLP(in_dim=heads + dx, out_dim=heads, num_layers=2, width=dz)
        encoder = TETNPEncoder(
            TETNPTransformerEncoder(num_layers=layers,
                                    mhca_layer=MultiHeadCrossTEAttentionLayer(kernel=kernel, **layer_args)),
            MLP(in_dim=dy + 1, out_dim=dz, num_layers=2, width=dz))
        return TETNP(encoder, decoder(), HeteroscedasticNormalLikelihood())

    def task():
        g = torch.Generator().manual_seed(3)
        xc = 4 * torch.rand(2, 10, dx, generator=g) - 2
        yc = torch.sin(3 * xc) + 0.1 * torch.randn(2, 10, dy, generator=g)
        xt = 6 * torch.rand(2, 25, dx, generator=g) - 3
        return xc, yc, xt

    if out == "--check-export":
        state_dict, kind, result = sys.argv[3], sys.argv[4], sys.argv[5]
        torch.manual_seed(11)  # other weights than the exported ones, all replaced
        model = {"tnp": tnp, "tetnp": tetnp}[kind]().eval()
        model.load_state_dict(torch.load(state_dict), strict=True)
        xc, yc, xt = task()
        with torch.no_grad():
            dist = model(xc, yc, xt)
        with open(result, "w") as f:
            json.dump({"mean": dist.mean.tolist(), "stddev": dist.stddev.tolist()}, f)
        return

    os.makedirs(out, exist_ok=True)
    for name, build in (("tnp", tnp), ("tetnp", tetnp)):
        torch.manual_seed(7)
        model = build().eval()
        xc, yc, xt = task()
        with torch.no_grad():
            dist = model(xc, yc, xt)
        state = model.state_dict()
        torch.save({"epoch": 3, "global_step": 300, "pytorch-lightning_version": "2.1.0",
                    "state_dict": {"model." + k: v for k, v in state.items()},
                    "hyper_parameters": {"optimiser": functools.partial(torch.optim.AdamW, lr=5e-4),
                                         # From the tnp package, which the converter need not have.
                                         "likelihood": HeteroscedasticNormalLikelihood}},
                   os.path.join(out, name + ".ckpt"))
        torch.save(state, os.path.join(out, name + ".state_dict.pt"))
        with open(os.path.join(out, name + ".prediction.json"), "w") as f:
            json.dump({"num_heads": heads, "xc": xc.tolist(), "yc": yc.tolist(), "xt": xt.tolist(),
                       "mean": dist.mean.tolist(), "stddev": dist.stddev.tolist()}, f)
    print("made reference checkpoints in", out)


if __name__ == "__main__":
    main()
