#!/usr/bin/env python3
"""Checks that includes point down the layers (DEVELOPERS.md, "Layers"); CI runs it first.

  core/      never includes Qt, widgets/ or app/ headers;
  widgets/   a tab's folder (function1d/, image/, maps/, training/) includes common/ and itself,
             never another tab;
  VTK        only in widgets/maps/map_view.cpp;
  core data  core/*/data includes nothing of models/ or predictors/, except the includes listed
             in DATA_EXCEPTIONS, which wait for a ground layer below data/ (Task, Prediction, the
             GP posterior); a new one fails, and one that is gone must leave the list.

Exit status 1 with one line per violation. Usage: tests/check-layers.py [REPOSITORY_ROOT]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
TABS = ("function1d", "image", "maps", "training")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
DATA_EXCEPTIONS = {
    ("core/include/npe/data/task_source.h", "npe/models/joint_gaussian.h"),
    ("core/include/npe/data/task_source.h", "npe/models/prediction.h"),
    ("core/src/data/era5_tasks.cpp", "npe/models/size_preset.h"),
    ("core/src/data/era5_tasks.cpp", "npe/models/model_registry.h"),
    ("core/src/data/image_tasks.cpp", "npe/models/size_preset.h"),
    ("core/src/data/image_tasks.cpp", "npe/models/model_registry.h"),
    ("core/src/data/gp_tasks.cpp", "npe/predictors/gp.h"),
    ("core/src/data/function_scene.cpp", "npe/predictors/gp.h"),
}


def sources(folder):
    for path in sorted((ROOT / folder).rglob("*")):
        if path.suffix in (".h", ".cpp", ".hpp", ".cc"):
            yield path.relative_to(ROOT).as_posix(), INCLUDE.findall(path.read_text(errors="replace"))


def main():
    problems, seen_exceptions = [], set()
    for name, includes in sources("core"):
        for header in includes:
            if re.match(r"Q[A-Za-z]|qt|widgets/|app/|common/", header):
                problems.append(f"{name}: core includes '{header}' (core never uses Qt or the GUI)")
            if "/data/" in name and re.match(r"(npe/)?(models|predictors)/", header):
                if (name, header) in DATA_EXCEPTIONS:
                    seen_exceptions.add((name, header))
                else:
                    problems.append(f"{name}: data/ includes '{header}', a layer above it")
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
    for name, header in sorted(DATA_EXCEPTIONS - seen_exceptions):
        problems.append(f"tests/check-layers.py: {name} no longer includes '{header}': remove it "
                        "from DATA_EXCEPTIONS")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"check-layers: includes point down the layers ({len(DATA_EXCEPTIONS)} data/ "
          "exceptions wait for the ground layer)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
