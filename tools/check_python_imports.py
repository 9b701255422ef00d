#!/usr/bin/env python3
"""Checks the imports of the baton Python package (issue 39): no circles,
and no import from a lower layer to a higher one.

Builds the import graph of python/baton: every .py file is a module
(`__init__.py` is its package), and every `import baton.x`, `from baton.x
import y`, `from . import y` and `from ..x import y` that names a module of
the package is an edge. An import inside a function body runs only when the
function is called ("lazy"); it still counts as an edge -- it is how a
circle is hidden, not how one is broken -- but it is listed apart. Names are
resolved as the import system does: `from P import y` is an edge to module
P.y when that is a module of the package, otherwise to P (y is an attribute
of P). Imports of the compiled extension (baton._baton, built from
python/src) and of other packages are no edges.

Two rules, each checked on every edge, lazy ones included:

  1. No circles. The strongly connected components of the graph (Tarjan's
     algorithm) with more than one module are the circles. Each must be
     exactly an entry of KNOWN below (empty now), so that
       - a new circle, or a known one that grew, fails the check;
       - a known circle that is gone, shrank or split also fails it, with a
         note saying how to update KNOWN, so the list only gets shorter.
  2. Layers. LAYERS below places every module in a layer, lowest first (the
     first layer with a matching pattern); an import may stay in its layer
     or go down, never up. A module no layer matches fails the check, so a
     new module is placed on purpose. docs/architecture.md describes the
     layers.

    python3 tools/check_python_imports.py               # python/baton
    python3 tools/check_python_imports.py --root DIR    # another package dir
    python3 tools/check_python_imports.py --list        # every component too
    python3 tools/check_python_imports.py --known FILE  # circles from FILE,
                                                        # not KNOWN (the tests)
    python3 tools/check_python_imports.py --layers FILE # layers from FILE, not
                                                        # LAYERS (the tests)

Exit status 0 when the circles are exactly KNOWN and every import keeps the
layers, 1 otherwise, 2 when there is no package at the root.
tests/python/test_python_imports.py runs it.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import pathlib
import sys
from collections.abc import Iterable

# Compiled extension modules of the package (relative to its name): imported
# by the package, defined by no .py file, importing nothing of it.
EXTENSIONS = frozenset({"_baton"})

# Circles tolerated for now: none (issue 39 broke the last ones). An entry
# would be one strongly connected component of python/baton's import graph;
# the check fails on any circle not listed, so a new one cannot creep in.
KNOWN: frozenset[frozenset[str]] = frozenset()


# The layers of python/baton, lowest first: (name, module patterns), the
# patterns fnmatch-style over dotted names; a module is in the first layer
# one of whose patterns it matches. An import may go to the same layer or a
# lower one. Within a layer only rule 1 (no circles) orders the modules.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # What everything else stands on: dtypes, pytrees, config, errors, the
    # profilers' data, processes; no arrays are made here.
    (
        "foundations",
        (
            "baton._version",
            "baton._blas_environment",
            "baton._dtypes",
            "baton._array_type",
            "baton.errors",
            "baton.typing",
            "baton.core",
            "baton._tree_keys",
            "baton.tree",
            "baton.tree_util",
            "baton._config",
            "baton._config_states",
            "baton._gc_guard",
            "baton._monitoring",
            "baton.monitoring",
            "baton.version",
            "baton._lax_precision",
            "baton._memory_kinds",
            "baton._compile_log",
            "baton._pprof",
            "baton._chrome_trace",
            "baton._memory_scope",
            "baton._memory_viewer",
            "baton.profiler",
            "baton._remote_device",
            "baton.distributed",
            "baton._numpy_interop",
            "baton._index_plan",
        ),
    ),
    # Concrete arrays: devices, Array's methods, transfers, sharded arrays.
    (
        "arrays",
        (
            "baton._device_queries",
            "baton._environment",
            "baton._array_methods",
            "baton._transfer",
            "baton._sharded_array",
            "baton.sharding",
            "baton._array_sharding",
            "baton._sharded_put",
            "baton._device_put",
            "baton._sharding_api",
            "baton._donation",
            "baton._creation",
            "baton._dlpack",
            "baton.dlpack",
        ),
    ),
    # Tracing a function into a program and compiling it: bt.jit, control
    # flow, the eager-op cache, indexing, custom rules, shard_map.
    (
        "tracing",
        (
            "baton._subtrace",
            "baton._abstract_eval",
            "baton._batching_hook",
            "baton._custom",
            "baton.debug",
            "baton._partitioned_call",
            "baton._sharded_call",
            "baton._shard_map_vma",
            "baton._shard_map_compile",
            "baton._shard_map",
            "baton._process_collectives",
            "baton._cost_analysis",
            "baton._residual_sources",
            "baton._stages",
            "baton._jit",
            "baton._compiler_ir",
            "baton.experimental",
            "baton.experimental.*",
            "baton._eager_transform",
            "baton._control_flow",
            "baton._ref_state",
            "baton._ops",
            "baton._eager_lax",
            "baton._indexing",
            "baton._at",
            "baton._lax_scatter",
            "baton._lax_gather",
            "baton._linalg_core",
            "baton._lax_fft",
        ),
    ),
    # The transformations: grad, vjp/jvp, vmap, jacobians, checkpoint.
    (
        "transforms",
        (
            "baton._autodiff",
            "baton._vmap",
            "baton._jacobians",
            "baton._checkpoint",
            "baton._toplevel_ad",
            "baton._toplevel",
            "baton.ad_checkpoint",
            "baton.test_util",
            "baton.custom_derivatives",
            "baton._custom_batching",
            "baton._transform_batching",
            "baton.custom_batching",
            "baton._shard_map_trace",
            "baton.stages",
        ),
    ),
    # baton.numpy: its modules import each other and the layers below only.
    ("numpy", ("baton.numpy", "baton.numpy.*")),
    # Libraries over baton.numpy: bt.lax's compositions, collectives, Array's
    # operators, random, scipy, nn, the example libraries, JAX's facades.
    (
        "libraries",
        (
            "baton._lax_math",
            "baton._lax_slicing",
            "baton._lax_conv",
            "baton._lax_window",
            "baton._lax_more",
            "baton._batched_collectives",
            "baton._collectives",
            "baton.lax",
            "baton.lax_linalg",
            "baton._dslice",
            "baton._operators",
            "baton.dtypes",
            "baton.flatten_util",
            "baton.random",
            "baton.random.*",
            "baton.scipy",
            "baton.scipy.*",
            "baton.nn",
            "baton.nn.*",
            "baton.ops",
            "baton._toplevel_more",
            "baton._ref",
            "baton.ref",
            "baton._numpy_special",
            "baton.image",
            "baton.example_libraries",
            "baton.example_libraries.*",
        ),
    ),
    # The package itself (bt.*) and what stands on all of it.
    ("package", ("baton", "baton.as_jax", "baton.as_jax.*")),
]


class Graph:
    """Modules of one package and the imports between them."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.modules: dict[str, pathlib.Path] = {}
        self.packages: set[str] = set()
        # (importer, imported) -> True when some import of it runs at import
        # time (eager), False when every one is inside a function (lazy).
        self.edges: dict[tuple[str, str], bool] = {}
        # (importer, line, imported) of the lazy imports.
        self.lazy: list[tuple[str, int, str]] = []
        # (importer, imported) -> the line of its first import statement.
        self.lines: dict[tuple[str, str], int] = {}

    def successors(self, module: str) -> list[str]:
        return sorted(b for (a, b) in self.edges if a == module)


def module_name(package: str, rel: pathlib.PurePath) -> tuple[str, bool]:
    """(dotted name, is a package) of a .py file at `rel` under the root."""
    parts = [package, *rel.parts]
    parts[-1] = parts[-1][: -len(".py")]
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def load(root: pathlib.Path) -> Graph:
    graph = Graph(root.name)
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts:
            continue
        name, is_package = module_name(root.name, rel)
        graph.modules[name] = path
        if is_package:
            graph.packages.add(name)
    for name in sorted(graph.modules):
        add_imports(graph, name)
    return graph


def resolve(graph: Graph, dotted: str) -> str | None:
    """The module of the package that importing `dotted` runs, if any."""
    top = graph.package
    if dotted != top and not dotted.startswith(top + "."):
        return None
    parts = dotted.split(".")
    if len(parts) > 1 and parts[1] in EXTENSIONS:
        return None
    while parts:
        candidate = ".".join(parts)
        if candidate in graph.modules:
            return candidate
        parts.pop()
    return None


def imported_names(graph: Graph, module: str, node: ast.AST) -> Iterable[str]:
    """Dotted names an import statement in `module` makes Python import."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".")
        if module not in graph.packages:
            base = base[:-1]  # a module's own package
        up = node.level - 1
        if up >= len(base):
            return  # beyond the top package: not ours
        base = base[: len(base) - up]
        if node.module:
            base += node.module.split(".")
        frm = ".".join(base)
    else:
        frm = node.module or ""
    for alias in node.names:
        sub = f"{frm}.{alias.name}"
        # `from P import y`: the submodule P.y if there is one, else P.
        if alias.name != "*" and (sub in graph.modules or is_extension(graph, sub)):
            yield sub
        else:
            yield frm


def is_extension(graph: Graph, dotted: str) -> bool:
    parts = dotted.split(".")
    return len(parts) == 2 and parts[0] == graph.package and parts[1] in EXTENSIONS


def add_imports(graph: Graph, module: str) -> None:
    path = graph.modules[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for dotted in imported_names(graph, module, node):
                target = resolve(graph, dotted)
                if target is None or target == module:
                    continue
                key = (module, target)
                graph.edges[key] = graph.edges.get(key, False) or not in_function
                graph.lines.setdefault(key, node.lineno)
                if in_function:
                    graph.lazy.append((module, node.lineno, target))
        inner = in_function or isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        )
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Tarjan's algorithm (iterative); components in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    succ = {m: graph.successors(m) for m in graph.modules}
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            for j in range(i, len(succ[node])):
                nxt = succ[node][j]
                if nxt not in index:
                    work.append((node, j + 1))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                components.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(components, key=lambda c: (-len(c), c))


def show(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


def read_known(path: pathlib.Path) -> list[frozenset[str]]:
    """Circles from a file: one a line, module names apart by spaces; # notes."""
    known = []
    for line in path.read_text(encoding="utf-8").splitlines():
        names = line.split("#", 1)[0].split()
        if names:
            known.append(frozenset(names))
    return known


def read_layers(path: pathlib.Path) -> list[tuple[str, tuple[str, ...]]]:
    """Layers from a file, lowest first: one a line, `name: pattern ...`."""
    layers = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, patterns = line.partition(":")
            layers.append((name.strip(), tuple(patterns.split())))
    return layers


def layer_of(module: str, layers: list[tuple[str, tuple[str, ...]]]) -> int | None:
    """The index of the first layer with a pattern matching `module`."""
    for i, (_, patterns) in enumerate(layers):
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return i
    return None


def check_layers(
    graph: Graph, layers: list[tuple[str, tuple[str, ...]]], root: pathlib.Path
) -> list[str]:
    """Problems: modules in no layer, and imports that go up a layer."""
    problems = []
    place = {m: layer_of(m, layers) for m in graph.modules}

    def path(module: str) -> str:
        return graph.modules[module].relative_to(root.parent).as_posix()

    for m in sorted(graph.modules):
        if place[m] is None:
            problems.append(f"{path(m)}: {m} is in no layer; place it in LAYERS")
    for (a, b), eager in sorted(graph.edges.items()):
        la, lb = place[a], place[b]
        if la is None or lb is None or lb <= la:
            continue
        how = "" if eager else " (lazily)"
        problems.append(
            f"{path(a)}:{graph.lines[(a, b)]}: {a} (layer {layers[la][0]}) "
            f"imports {b} (layer {layers[lb][0]}){how}: an import up a layer"
        )
    return problems


def describe(graph: Graph, component: list[str]) -> list[str]:
    """The edges inside a component, one line each; lazy ones marked."""
    members = set(component)
    lines = []
    for a in component:
        for b in graph.successors(a):
            if b in members:
                kind = "" if graph.edges[(a, b)] else "  (lazy)"
                lines.append(f"    {a} -> {b}{kind}")
    return lines


def compare(
    circles: list[frozenset[str]], known: Iterable[frozenset[str]]
) -> list[str]:
    """Problems: circles not exactly KNOWN, and KNOWN entries not found."""
    problems = []
    known = set(known)
    for c in circles:
        if c in known:
            continue
        bigger = [k for k in known if c < k]
        smaller = [k for k in known if k < c]
        if bigger:
            continue  # reported below, as the known circle that shrank
        if smaller:
            grown = c - frozenset().union(*smaller)
            problems.append(
                f"a known circle grew: now {{{show(c)}}}; added: {show(grown)}"
            )
        else:
            problems.append(f"a new circle: {{{show(c)}}}")
    for k in sorted(known - set(circles), key=sorted):
        inside = [c for c in circles if c < k]
        if inside:
            problems.append(
                f"stale KNOWN entry {{{show(k)}}}: that circle shrank or split "
                f"(good); replace the entry with "
                + " and ".join(f"{{{show(c)}}}" for c in inside)
            )
        elif not any(k < c for c in circles):
            problems.append(
                f"stale KNOWN entry {{{show(k)}}}: that circle is gone (good); "
                "remove the entry"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root",
        type=pathlib.Path,
        default=pathlib.Path(__file__).resolve().parent.parent / "python" / "baton",
        help="the package directory (default: python/baton of this checkout)",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="print every strongly connected component, one module ones too",
    )
    parser.add_argument(
        "--known",
        type=pathlib.Path,
        help="a file of known circles (one a line, module names apart by "
        "spaces) to use instead of KNOWN",
    )
    parser.add_argument(
        "--layers",
        type=pathlib.Path,
        help="a file of layers, lowest first (one a line: `name: pattern "
        "...`), to use instead of LAYERS",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if not (root / "__init__.py").is_file():
        print(f"check_python_imports: no package at {root}", file=sys.stderr)
        return 2
    graph = load(root)
    components = strongly_connected(graph)
    cycles = [c for c in components if len(c) > 1]
    if args.list:
        for c in components:
            print(" ".join(c))
    for c in cycles:
        print(f"circle of {len(c)} modules: {' '.join(c)}")
        print("\n".join(describe(graph, c)))
    members = {m for c in cycles for m in c}
    lazy = [x for x in graph.lazy if x[0] in members and x[2] in members]
    if lazy:
        print("lazy imports (inside functions) within circles:")
        for module, line, target in sorted(set(lazy)):
            path = graph.modules[module].relative_to(root.parent).as_posix()
            print(f"    {path}:{line}: {target}")
    circles = [frozenset(c) for c in cycles]
    known = read_known(args.known) if args.known else KNOWN
    problems = compare(circles, known)
    layers = read_layers(args.layers) if args.layers else LAYERS
    problems += check_layers(graph, layers, root)
    for p in problems:
        print(p)
    summary = (
        f"{len(graph.modules)} modules, {len(graph.edges)} imports "
        f"({sum(not e for e in graph.edges.values())} only lazy), "
        f"{len(cycles)} circle(s), {len(layers)} layers"
    )
    if problems:
        print(
            f"check_python_imports: {summary}; {len(problems)} problem(s): "
            "no circle may be missing from KNOWN, and no import may go up "
            "a layer of LAYERS (tools/check_python_imports.py)",
            file=sys.stderr,
        )
        return 1
    print(
        f"check_python_imports: {summary}; circles all KNOWN, every import "
        "down the layers (issue 39)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
