#!/usr/bin/env python3
"""Checks that baton's layers only call down (DESIGN section 2 and 6).

The layers, lowest first (a file may include its own layer and lower ones):

    0  src/baton/core
    1  src/baton/runtime, src/baton/collectives (peers: depend on core only,
       and neither includes the other)
    2  src/baton/compiler
    3  src/baton/backend (the neutral headers in backend/, and the backends
       cpu/, simulated/, cuda/: a backend includes only itself and the
       neutral headers)
    4  src/baton/jit
    5  python/src (the nanobind bindings)

Above the backend layer (jit/ and python/src) nothing names the CPU backend:
no `#include "baton/backend/cpu/..."` and no `cpu::` outside comments and
strings; the jit reaches every backend through backend/executable.h.

Every `#include "baton/..."` line of src/baton/** and python/src/** is
checked; a file in a folder that is no layer is reported too, so a new
folder gets a place here on purpose.

    python3 tools/check_layers.py             # this checkout
    python3 tools/check_layers.py --root DIR  # another tree (the tests plant
                                              # violations in a copy)

Exit status 0 when every file keeps the rules; 1 with one line per broken
rule (file:line: rule) otherwise. tests/python/test_architecture_layers.py
runs it.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

# Folder (under src/baton, or python/src) -> rank.
RANKS = {
    "core": 0,
    "runtime": 1,
    "collectives": 1,
    "compiler": 2,
    "backend": 3,
    "jit": 4,
    "python/src": 5,
}
BACKENDS = ("cpu", "simulated", "cuda")
SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh", ".inc")

INCLUDE = re.compile(r'^\s*#\s*include\s*"baton/([^"]+)"')
CPU_NAME = re.compile(r"\bcpu::")
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def layer_of_include(path: str) -> tuple[str | None, str | None]:
    """(layer, backend) of an included "baton/<path>"; backend may be None."""
    parts = path.split("/")
    if len(parts) < 2 or parts[0] not in RANKS:
        return None, None
    backend = None
    if parts[0] == "backend" and len(parts) > 2:
        backend = parts[1]
    return parts[0], backend


def layer_of_file(rel: pathlib.PurePosixPath) -> tuple[str | None, str | None]:
    """(layer, backend) of a source file, from its path under the root."""
    parts = rel.parts
    if parts[:2] == ("python", "src"):
        return "python/src", None
    if parts[:2] != ("src", "baton") or len(parts) < 4:
        return None, None
    layer = parts[2]
    if layer not in RANKS:
        return None, None
    backend = parts[3] if layer == "backend" and len(parts) > 4 else None
    return layer, backend


def code_without_comments(lines: list[str]) -> list[str]:
    """The lines with comments and string literals blanked out."""
    out = []
    in_block = False
    for line in lines:
        text = ""
        i = 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                else:
                    in_block = False
                    i = end + 2
                continue
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block = True
                i += 2
                continue
            m = STRING.match(line, i)
            if m:
                text += '""'
                i = m.end()
                continue
            text += line[i]
            i += 1
        out.append(text)
    return out


def check_file(root: pathlib.Path, path: pathlib.Path) -> list[str]:
    rel = pathlib.PurePosixPath(path.relative_to(root).as_posix())
    layer, backend = layer_of_file(rel)
    if layer is None:
        return [f"{rel}:1: not in a known layer (add its folder to "
                "tools/check_layers.py RANKS)"]
    rank = RANKS[layer]
    above_backend = rank > RANKS["backend"]
    problems = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for n, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        target = m.group(1)
        to_layer, to_backend = layer_of_include(target)
        where = f"{rel}:{n}: includes baton/{target}"
        if to_layer is None:
            problems.append(f"{where}, which is in no known layer")
            continue
        to_rank = RANKS[to_layer]
        if to_rank > rank:
            problems.append(
                f"{where}: {layer} (layer {rank}) may not include "
                f"{to_layer} (layer {to_rank}); layers only call down")
        elif to_rank == rank and to_layer != layer:
            problems.append(
                f"{where}: {layer} and {to_layer} are peers (layer {rank}) "
                "and do not include each other")
        elif (layer == "backend" and backend is not None
              and to_backend is not None and to_backend != backend):
            problems.append(
                f"{where}: the {backend} backend may include only itself and "
                "the backend-neutral headers of src/baton/backend")
        if above_backend and to_backend == "cpu":
            problems.append(
                f"{where}: {layer} names no backend; compile and run through "
                "baton/backend/executable.h")
    if above_backend:
        for n, line in enumerate(code_without_comments(lines), 1):
            if CPU_NAME.search(line):
                problems.append(
                    f"{rel}:{n}: names cpu::, the CPU backend: {layer} reaches "
                    "backends only through backend-neutral interfaces "
                    "(baton/backend/executable.h, environment_info.h)")
    return problems


def source_files(root: pathlib.Path) -> list[pathlib.Path]:
    files = []
    for top in (root / "src" / "baton", root / "python" / "src"):
        if top.is_dir():
            files += [p for p in top.rglob("*")
                      if p.is_file() and p.suffix in SOURCE_SUFFIXES]
    return sorted(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root", type=pathlib.Path,
        default=pathlib.Path(__file__).resolve().parent.parent,
        help="the tree to check (default: this checkout)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    files = source_files(root)
    if not files:
        print(f"check_layers: no sources under {root}/src/baton or "
              f"{root}/python/src", file=sys.stderr)
        return 2
    problems = []
    for f in files:
        problems += check_file(root, f)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} broken rule(s) in "
              f"{len(files)} files", file=sys.stderr)
        return 1
    print(f"check_layers: {len(files)} files keep the layering")
    return 0


if __name__ == "__main__":
    sys.exit(main())
