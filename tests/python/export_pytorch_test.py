#!/usr/bin/env python3
"""npe export-pytorch, for every kind (issue 106): a model trained here for two steps (tiny sizes)
is exported; the PyTorch module predicts what `npe predict` predicts (mean, std; for the joint
kinds, coherent samples of the same seed from its covariance) at the data as they are and moved
by a shift; torch.jit.script takes it, and the scripted file opens in `npe predict` with the same
predictions; a translation-equivariant kind is equivariant in PyTorch too; a model.json with an
option missing or changed is refused by load() in words.

Usage: export_pytorch_test.py NPE WORK_DIR   (python3 with torch: Debian's python3-torch)"""

import copy
import csv
import json
import os
import subprocess
import sys

import torch

NPE, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
TOLERANCE = 1e-5

TINY_TRANSFORMER = ["dim_model=16", "num_layers=2", "num_heads=2", "head_dim=8"]
TINY_TE = TINY_TRANSFORMER + ["pairwise_width=8"]
# (name, kind, task, model options): every kind, and the options that change the architecture.
CASES = [
    ("cnp", "cnp", "gp1d", ["dim_model=16"]),
    ("cnp-homoscedastic", "cnp", "gp1d", ["dim_model=16", "heteroscedastic=false"]),
    ("rcnp", "rcnp", "gp1d", ["dim_model=16"]),
    ("tnp", "tnp", "gp1d", TINY_TRANSFORMER),
    ("pttnp", "pttnp", "gp1d", TINY_TRANSFORMER + ["num_pseudo_tokens=4"]),
    ("tetnp", "tetnp", "gp1d", TINY_TE),
    ("tetnp-shared-fourier", "tetnp", "gp1d",
     TINY_TE + ["share_layer_weights=true", "distance_frequencies=3"]),
    ("tetnp-fixed-locations", "tetnp", "gp1d", TINY_TE + ["update_locations=false"]),
    ("tetnp-context-frequencies", "tetnp", "gp1d", TINY_TE + ["context_frequencies=2"]),
    ("tepttnp", "tepttnp", "gp1d", TINY_TE + ["num_pseudo_tokens=4"]),
    ("tepttnp-mean-locations", "tepttnp", "gp1d",
     TINY_TE + ["num_pseudo_tokens=4", "pseudo_locations=context_mean"]),
    ("tnpd", "tnpd", "gp1d", TINY_TRANSFORMER),
    ("tnpa", "tnpa", "gp1d", TINY_TRANSFORMER),
    ("tnpnd", "tnpnd", "gp1d", TINY_TRANSFORMER + ["projection_dim=4"]),
    ("tnpnd-lowrank", "tnpnd", "gp1d", TINY_TRANSFORMER + ["projection_dim=4",
                                                           "covariance=lowrank"]),
    ("tetnpnd", "tetnpnd", "gp1d", TINY_TE + ["projection_dim=4"]),
    ("tetnpnd-context-frequencies", "tetnpnd", "gp1d",
     TINY_TE + ["projection_dim=4", "context_frequencies=2"]),
    ("bsatnp", "bsatnp", "gp1d", TINY_TRANSFORMER),
    ("bsatnp-shared", "bsatnp", "gp1d", TINY_TRANSFORMER + ["share_layer_weights=true"]),
    ("convcnp", "convcnp", "gp1d", ["conv_channels=8", "unet_depth=3", "points_per_unit=16"]),
    ("tetnp-centred", "tetnp", "gp1d", TINY_TE + ["centre_per_task=true"]),
    ("tnpnd-centred", "tnpnd", "gp1d", TINY_TRANSFORMER + ["projection_dim=4",
                                                           "centre_per_task=true"]),
    ("convcnp2d-images", "convcnp2d", "tfmnist", ["conv_channels=8", "cnn_layers=2"]),
    # ERA5: D_x = 5 (latitude, longitude, time and two place features), input_scale 1/8.
    ("tetnp-era5", "tetnp", "era5", TINY_TE),
    ("tepttnp-era5-differences", "tepttnp", "era5",
     TINY_TE + ["num_pseudo_tokens=4", "place_features=differences"]),
    ("bsatnp-era5-time", "bsatnp", "era5", TINY_TRANSFORMER + ["time_bias_features=3"]),
    ("convcnp2d-era5", "convcnp2d", "era5", ["conv_channels=8", "cnn_layers=2"]),
]
TRANSLATION_EQUIVARIANT = {"rcnp", "tetnp", "tepttnp", "tetnpnd", "bsatnp", "convcnp",
                           "convcnp2d"}
JOINT = {"tnpnd", "tetnpnd"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def npe(*arguments):
    result = subprocess.run([NPE] + list(arguments), capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("npe %s failed:\n%s%s" % (" ".join(arguments), result.stdout,
                                                      result.stderr))
    return result.stdout


def scene(task, shift):
    """A context and targets of the task's dimensions, reproducible; coordinates moved by shift
    (place features stay)."""
    g = torch.Generator().manual_seed(3)
    if task == "gp1d":
        xc = torch.rand(1, 10, 1, generator=g, dtype=torch.float64) * 4 - 2
        xt = torch.linspace(-2.5, 2.5, 17, dtype=torch.float64).view(1, 17, 1)
        yc = torch.sin(3 * xc)
        dims = 1
    elif task == "tfmnist":
        cells = torch.stack(torch.meshgrid(torch.arange(10.0), torch.arange(10.0),
                                           indexing="ij"), -1).reshape(1, 100, 2).double()
        pick = torch.randperm(100, generator=g)
        xc, xt = cells[:, pick[:20]] + 20, cells[:, pick[20:50]] + 20
        yc = torch.rand(1, 20, 1, generator=g, dtype=torch.float64)
        dims = 2
    else:  # era5: cell coordinates (whole numbers for the on-grid ConvCNP), time, features
        def points(n):
            lat = torch.randint(0, 12, (1, n, 1), generator=g).double()
            lon = torch.randint(0, 12, (1, n, 1), generator=g).double()
            time = torch.randint(0, 3, (1, n, 1), generator=g).double()
            features = torch.rand(1, n, 2, generator=g, dtype=torch.float64)
            return torch.cat([lat, lon, time, features], -1)
        xc, xt = points(15), points(12)
        yc = torch.randn(1, 15, 1, generator=g, dtype=torch.float64)
        dims = 3
    moved_c, moved_t = xc.clone(), xt.clone()
    moved_c[..., :dims] += shift
    moved_t[..., :dims] += shift
    return moved_c, yc, moved_t


def write_points(path, x, y=None):
    dx = x.shape[-1]
    names = ["x"] if dx == 1 else ["x%d" % (i + 1) for i in range(dx)]
    with open(path, "w") as f:
        f.write(",".join(names + (["y"] if y is not None else [])) + "\n")
        for i in range(x.shape[1]):
            values = ["%.17g" % v for v in x[0, i].tolist()]
            if y is not None:
                values.append("%.17g" % y[0, i, 0].item())
            f.write(",".join(values) + "\n")


def npe_predict(checkpoint, xc, yc, xt, samples=0):
    write_points(os.path.join(WORK, "context.csv"), xc, yc)
    write_points(os.path.join(WORK, "targets.csv"), xt)
    out = os.path.join(WORK, "predicted.csv")
    arguments = ["predict", "--checkpoint", checkpoint, "--context",
                 os.path.join(WORK, "context.csv"), "--targets",
                 os.path.join(WORK, "targets.csv"), "--out", out, "--threads", "1"]
    if samples:
        arguments += ["--samples", str(samples), "--seed", "7"]
    npe(*arguments)
    rows = list(csv.DictReader(open(out)))

    def column(suffix):
        names = [k for k in rows[0] if k == suffix or k.endswith("_" + suffix)]
        return torch.tensor([float(r[names[0]]) for r in rows], dtype=torch.float64)
    result = {"mean": column("mean"), "std": column("std")}
    for k in rows[0]:
        if k.startswith("sample_"):
            result[k] = torch.tensor([float(r[k]) for r in rows], dtype=torch.float64)
    return result


def largest_difference(a, b):
    return (a.double().flatten() - b.double().flatten()).abs().max().item()


sys.path.insert(0, WORK)
# npe predict at a shift runs for the first case of each kind and task and for per-task
# centring; another option's variant compares with npe at Δ = 0 (its code at a shift is the
# same) and is checked for equivariance in PyTorch at both: each npe run costs CI a second or two.
compared_at_shift = set()
for name, kind, task, options in CASES:
    checkpoint = os.path.join(WORK, name + ".pt")
    npe("train", "--model", kind, "--task", task, "--steps", "2", "--seed", "1", "--val-tasks",
        "8", "--model-option", *options, "--out", checkpoint)
    exported = os.path.join(WORK, name + "-pytorch")
    npe("export-pytorch", checkpoint, "--out", exported)
    sys.path[0] = exported
    for module in [m for m in sys.modules if m == "npe_models" or m.startswith("npe_models.")]:
        del sys.modules[module]
    import npe_models
    model = npe_models.load(exported)
    description = json.load(open(os.path.join(exported, "model.json")))
    check(description["kind"] == kind, "%s: model.json names the kind %s" %
          (name, description["kind"]))
    scripted = torch.jit.script(model)
    scripted_file = os.path.join(WORK, name + "-scripted.pt")
    torch.jit.save(scripted, scripted_file, _extra_files={"npe.json": json.dumps({
        "name": name + " (exported)", "task": description["task"],
        "dim_x": description["options"]["dim_x"], "dim_y": description["options"]["dim_y"],
        "dim_features": description["options"]["dim_features"],
        "input_scale": 1.0, "covariance": kind in JOINT})})
    shifts = [0.0, 3.0] if task != "gp1d" else [0.0, 3.7]
    unshifted = None
    for shift in shifts:
        xc, yc, xt = scene(task, shift)
        with torch.no_grad():
            outputs = model(xc, yc, xt)
            scripted_outputs = scripted(xc, yc, xt)
        check(largest_difference(outputs[0], scripted_outputs[0]) == 0.0,
              "%s: the scripted module predicts otherwise" % name)
        if kind in TRANSLATION_EQUIVARIANT:
            if unshifted is None:
                unshifted = outputs
            else:
                check(largest_difference(outputs[0], unshifted[0]) <= 1e-4,
                      "%s: not translation equivariant in PyTorch (mean moved by %g)" %
                      (name, largest_difference(outputs[0], unshifted[0])))
        if shift != 0.0:
            centred = "centre_per_task=true" in options  # its own code for shifted data
            if (kind, task) in compared_at_shift and not centred:
                continue
            compared_at_shift.add((kind, task))
        here = npe_predict(checkpoint, xc, yc, xt, samples=3 if kind in JOINT else 0)
        check(largest_difference(outputs[0], here["mean"]) <= TOLERANCE,
              "%s at shift %g: PyTorch's mean differs from npe predict's by %g" %
              (name, shift, largest_difference(outputs[0], here["mean"])))
        check(largest_difference(outputs[1], here["std"]) <= TOLERANCE,
              "%s at shift %g: PyTorch's std differs from npe predict's by %g" %
              (name, shift, largest_difference(outputs[1], here["std"])))
        if shift == 0.0:
            # Back in npe: the scripted file predicts the same (its own shifts are the ones
            # above: the module is the same code).
            back = npe_predict(scripted_file, xc, yc, xt, samples=3 if kind in JOINT else 0)
            for key in ("mean", "std"):
                check(largest_difference(back[key], here[key]) <= TOLERANCE,
                      "%s: the scripted file's %s in npe differs by %g" %
                      (name, key, largest_difference(back[key], here[key])))
        if kind in JOINT and shift == 0.0:
            # The covariance: npe draws the same samples from the scripted module's covariance
            # as from the checkpoint's own factor.
            n = xt.shape[1]
            check(tuple(outputs[2].shape) == (1, n, n), "%s: covariance of shape %s" %
                  (name, tuple(outputs[2].shape)))
            check(largest_difference(outputs[2].diagonal(0, -2, -1).sqrt(), outputs[1]) <= 1e-5,
                  "%s: the covariance's diagonal is not the std squared" % name)
            for k in ("sample_1", "sample_2", "sample_3"):
                check(largest_difference(back[k], here[k]) <= 1e-4,
                      "%s: %s from the scripted file differs by %g" %
                      (name, k, largest_difference(back[k], here[k])))
    print("%-26s exported, predicts as npe does, scripts and opens again" % name)

# A model.json with an option missing, or changed so that the weights no longer fit.
exported = os.path.join(WORK, "tetnp-pytorch")
sys.path[0] = exported
for module in [m for m in sys.modules if m == "npe_models" or m.startswith("npe_models.")]:
    del sys.modules[module]
import npe_models  # noqa: E402
original = json.load(open(os.path.join(exported, "model.json")))
for change, expected in (("missing", "lack num_heads"), ("changed", "do not fit")):
    broken = copy.deepcopy(original)
    if change == "missing":
        del broken["options"]["num_heads"]
    else:
        broken["options"]["pairwise_width"] = 12
    json.dump(broken, open(os.path.join(exported, "model.json"), "w"))
    try:
        npe_models.load(exported)
        check(False, "a model.json with an option %s loaded" % change)
    except ValueError as e:
        check(expected in str(e), "an option %s: %s" % (change, e))
json.dump(original, open(os.path.join(exported, "model.json"), "w"))

# A kind without a module here is refused by npe in words (none is left: every kind exports).
if failures:
    print("%d failures" % len(failures))
    sys.exit(1)
print("all %d cases passed" % len(CASES))
