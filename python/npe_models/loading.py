"""load(DIR): the exported model as a torch.nn.Module in eval mode, its weights loaded with
strict=True. model.json names the kind and its options; weights.pt holds the state_dict under
npe's own parameter names (core's libtorch modules), which are mapped onto this package's."""

import json
import os
import re

import torch

from . import bsatnp, cnp, convcnp, pttnp, rcnp, tetnp, tnp, tnpd, tnpnd
from .centred import CentredPerTask, CentredPerTaskJoint

FORMAT = "npe-pytorch-export/1"

# Each kind: its module's class and the options its constructor reads.
KINDS = {
    "cnp": (cnp.CNP, cnp.OPTIONS),
    "tnp": (tnp.TNP, tnp.OPTIONS),
    "tetnp": (tetnp.TETNP, tetnp.OPTIONS),
    "rcnp": (rcnp.RCNP, rcnp.OPTIONS),
    "tnpd": (tnpd.TNPD, tnpd.OPTIONS),
    "tnpnd": (tnpnd.TNPND, tnpnd.TNPND_OPTIONS),
    "tetnpnd": (tnpnd.TETNPND, tnpnd.TETNPND_OPTIONS),
    "pttnp": (pttnp.PTTNP, pttnp.PTTNP_OPTIONS),
    "tepttnp": (pttnp.TEPTTNP, pttnp.TEPTTNP_OPTIONS),
    # TNP-A's one-step marginals are TNP-D's computation on TNP-D's weights (its autoregressive
    # sampling and likelihood are not in the module).
    "tnpa": (tnpd.TNPD, tnpd.OPTIONS),
    "bsatnp": (bsatnp.BSATNP, bsatnp.OPTIONS),
    "convcnp": (convcnp.ConvCNP, convcnp.OPTIONS_1D),
    "convcnp2d": (convcnp.ConvCNP2d, convcnp.OPTIONS_2D),
}

# Kinds whose forward returns the covariance too.
JOINT_KINDS = {"tnpnd", "tetnpnd"}

# Kinds whose names need more than _RENAMES: their own mapping, given the options.
SPECIAL_RENAMES = {"convcnp": convcnp.rename_1d}

# npe's names (libtorch's registration) -> this package's (ModuleLists).
_RENAMES = [
    (re.compile(r"(^|\.)linear(\d+)\."), r"\1layers.\2."),
    (re.compile(r"^self(\d+)\."), r"layers.\1.self_block."),
    (re.compile(r"^cross(\d+)\."), r"layers.\1.cross_block."),
    (re.compile(r"^layer(\d+)\."), r"layers.\1."),
    (re.compile(r"^covariance(\d+)\."), r"covariance_layers.\1."),
    (re.compile(r"^conv(\d+)\."), r"convs.\1."),
    (re.compile(r"^(pseudo_from_context|context_from_pseudo|target_from_pseudo)(\d+)\."),
     r"layers.\2.\1."),
]


def python_name(npe_name, kind="", options=None):
    """This package's name of a parameter that npe calls `npe_name`."""
    if kind in SPECIAL_RENAMES:
        npe_name = SPECIAL_RENAMES[kind](npe_name, options)
    for pattern, replacement in _RENAMES:
        npe_name = pattern.sub(replacement, npe_name)
    return npe_name


def build(description):
    """The module of a model.json's description, untrained. Raises ValueError naming what is
    missing or not understood."""
    if description.get("format") != FORMAT:
        raise ValueError("model.json is not an npe export of format %s (format: %r)" %
                         (FORMAT, description.get("format")))
    kind = description.get("kind")
    if kind not in KINDS:
        raise ValueError("model.json names the kind %r, which this package does not build "
                         "(it builds %s)" % (kind, ", ".join(sorted(KINDS))))
    module, names = KINDS[kind]
    options = description.get("options")
    if not isinstance(options, dict):
        raise ValueError("model.json has no 'options' object")
    missing = [name for name in names if name not in options]
    if missing:
        raise ValueError("model.json's options lack %s, which a %s needs" %
                         (", ".join(missing), kind))
    model = module(options)
    if options.get("centre_per_task", False):
        return (CentredPerTaskJoint if kind in JOINT_KINDS else CentredPerTask)(model)
    return model


def _weights_holder(model):
    """The module whose parameters npe's state_dict names."""
    if isinstance(model, (CentredPerTask, CentredPerTaskJoint)):
        return model.model
    return model


def load(directory, map_location="cpu"):
    """The model exported to `directory`, in eval mode. forward(xc [B, Nc, Dx], yc [B, Nc, Dy],
    xt [B, Nt, Dx]) returns (mean, std), each [B, Nt, Dy], in the model's units (model.json's
    "standardisation" says how they relate to the data's)."""
    with open(os.path.join(directory, "model.json")) as f:
        description = json.load(f)
    model = build(description)
    state = torch.load(os.path.join(directory, "weights.pt"), map_location=map_location)
    state = {python_name(name, description["kind"], description["options"]): tensor
             for name, tensor in state.items()}
    try:
        _weights_holder(model).load_state_dict(state, strict=True)
    except RuntimeError as e:
        raise ValueError("the weights do not fit model.json's options (changed since the "
                         "export?): %s" % e) from None
    return model.eval()
