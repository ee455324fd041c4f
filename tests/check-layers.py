#!/usr/bin/env python3
"""Checks that includes point down the layers (DEVELOPERS.md, "Layers"); CI runs it first.

  core/      never includes Qt, widgets/ or app/ headers;
  widgets/   a tab's folder (function1d/, image/, maps/, training/) includes common/ and itself,
             never another tab;
  VTK        only in widgets/maps/map_view.cpp;
  core       the layers from the bottom: ground/ (Task, Prediction, JointGaussian, kernels, the
             exact GP posterior: what every layer speaks), data/, models/, predictors/,
             training/; a layer includes only its own folder, the ones below it and the shared
             headers at npe/ (errors, json, linalg, ...), which include no layer; private
             headers (models/tokens.h) count as their folder's layer.

Exit status 1 with one line per violation. Usage: tests/check-layers.py [REPOSITORY_ROOT]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
TABS = ("function1d", "image", "maps", "training")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
# Core's layers, bottom first: each may include its own folder and those before it.
CORE_LAYERS = ("ground", "data", "models", "predictors", "training")


SHARED = "shared"  # the headers at npe/ (errors, json, linalg, ...): below every layer


def core_layer(path):
    """The layer of a core file (core/...) or of a header it includes: npe/LAYER/..., or a
    private one by its path under core/src (models/tokens.h); SHARED for a file at the top of
    core/include/npe or core/src and for npe/NAME.h; None for a header of a library or one
    beside the file."""
    parts = path.split("/")
    if parts[0] == "core":
        parts = parts[3:] if parts[1] == "include" else parts[2:]  # after include/npe or src
    elif parts[0] == "npe":
        parts = parts[1:]
    elif parts[0] not in CORE_LAYERS:
        return None
    if len(parts) == 1:
        return SHARED if path.startswith(("core/", "npe/")) else None
    return parts[0] if parts[0] in CORE_LAYERS else None


def rank(layer):
    return -1 if layer == SHARED else CORE_LAYERS.index(layer)


def sources(folder):
    for path in sorted((ROOT / folder).rglob("*")):
        if path.suffix in (".h", ".cpp", ".hpp", ".cc"):
            yield path.relative_to(ROOT).as_posix(), INCLUDE.findall(path.read_text(errors="replace"))


def main():
    problems = []
    for name, includes in sources("core"):
        layer = core_layer(name)
        for header in includes:
            if re.match(r"Q[A-Za-z]|qt|widgets/|app/|common/", header):
                problems.append(f"{name}: core includes '{header}' (core never uses Qt or the GUI)")
            included = core_layer(header)
            if layer is None or included is None or rank(included) <= rank(layer):
                continue
            what = "a shared header includes" if layer == SHARED else f"the {layer} layer includes"
            problems.append(f"{name}: {what} '{header}' of the {included} layer above")
    for name, includes in sources("widgets"):
        parts = name.split("/")
        tab = parts[1] if len(parts) > 2 and parts[1] in TABS else None
        for header in includes:
            folder = header.split("/")[0]
            if tab and folder in TABS and folder != tab:
                problems.append(f"{name}: the {tab} tab includes '{header}' of another tab "
                                "(shared parts go in common/)")
            if header.startswith("vtk") and name != "widgets/maps/map_view.cpp":
                problems.append(f"{name}: includes VTK ('{header}'); only maps/map_view.cpp may")
    for name, includes in sources("app"):
        for header in includes:
            if header.startswith("vtk"):
                problems.append(f"{name}: includes VTK ('{header}'); only maps/map_view.cpp may")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("check-layers: includes point down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
