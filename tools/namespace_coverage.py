#!/usr/bin/env python3
"""Which public names of JAX's namespaces baton has, and which are checked.

For each namespace pair (jax / baton (the top level), jax.lax / baton.lax,
jax.nn / baton.nn, jax.random / baton.random, jax.numpy.fft, jax.scipy.fft,
jax.scipy.special,
jax.scipy.signal, jax.scipy.stats, jax.scipy.linalg, jax.tree_util,
jax.example_libraries.stax / .optimizers) lists the
public names of the JAX module (``*_p`` primitives of jax.lax left out) and
whether the baton module has each. A name whose JAX value is a module
(``jax.scipy.stats.norm``) also counts its functions.

Alone it reports presence. With ``--checked FILE`` (what the JAX comparison
suite wrote when run with ``BATON_API_COVERAGE=FILE``; see
tests/jax_compat/_api_coverage.py) each present name is "matching" when
tests comparing baton with JAX used it and all of them passed, "differing"
when one of them failed, and "unchecked" when none used it. Names left out
on purpose are listed with the reason (LEFT_OUT below). CI runs it after
the comparison suite with ``--require 90``: every namespace at least 90%
present and matching, none differing.

    python3 tools/namespace_coverage.py              # the table
    python3 tools/namespace_coverage.py -v           # and the missing names
    python3 tools/namespace_coverage.py --only jax.nn -v
    python3 tools/namespace_coverage.py --only jax -v   # the top level
    BATON_API_COVERAGE=/tmp/api.json python3 -m pytest -q tests/jax_compat
    python3 tools/namespace_coverage.py --checked /tmp/api.json --require 90 -v
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import sys
import types
from dataclasses import dataclass, field

os.environ.setdefault("JAX_PLATFORMS", "cpu")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jnp_coverage

PAIRS = (
    ("jax", "baton"),
    ("jax.numpy", "baton.numpy"),
    ("jax.lax", "baton.lax"),
    ("jax.nn", "baton.nn"),
    ("jax.random", "baton.random"),
    ("jax.numpy.fft", "baton.numpy.fft"),
    ("jax.scipy.fft", "baton.scipy.fft"),
    ("jax.scipy.special", "baton.scipy.special"),
    ("jax.scipy.signal", "baton.scipy.signal"),
    ("jax.scipy.stats", "baton.scipy.stats"),
    ("jax.scipy.linalg", "baton.scipy.linalg"),
    ("jax.tree_util", "baton.tree_util"),
    ("jax.example_libraries.stax", "baton.example_libraries.stax"),
    ("jax.example_libraries.optimizers", "baton.example_libraries.optimizers"),
)

# Why baton lacks each name it lacks on purpose or for now (the report lists them apart
# from the plain missing ones; they still count as missing).
_INTERNAL = "JAX's internal machinery, exported for its own libraries; baton's differs"
_NARROW = "a narrow dtype baton does not have"
_FLOAT8 = "float8 / microscaling formats: baton has no float8 dtypes"
_SHARDING_TYPES = "sharding-in-types (the explicit-sharding API of issue 37)"
# docs/jax_surface.md has the longer story of each.
LEFT_OUT: dict[str, dict[str, str]] = {
    "jax": {
        "ad": _INTERNAL + " (markers for vjp(...).with_refs)",
        "api_util": _INTERNAL,
        "interpreters": _INTERNAL,
        "lib": _INTERNAL + " (jaxlib's bindings)",
        "ffi": "XLA custom calls; baton's programs are not XLA's, and C++ "
        "users call baton's C++ API directly",
        "export": "serializes StableHLO; baton's programs are not StableHLO",
        "smap": _SHARDING_TYPES,
        "auto_pcast": _SHARDING_TYPES,
        "remove_size_one_mesh_axis_from_type": _SHARDING_TYPES,
        "jax2tf_associative_scan_reductions": "changes jax2tf's lowering only; "
        "baton has no TensorFlow export",
    },
    "jax.numpy": {
        **{
            n: _FLOAT8
            for n in (
                "float4_e2m1fn",
                "float6_e2m3fn",
                "float6_e3m2fn",
                "float8_e3m4",
                "float8_e4m3",
                "float8_e4m3b11fnuz",
                "float8_e4m3fn",
                "float8_e4m3fnuz",
                "float8_e5m2",
                "float8_e5m2fnuz",
                "float8_e8m0fnu",
            )
        },
        **{n: _NARROW for n in ("int1", "int2", "int4", "uint1", "uint2", "uint4")},
        "uint16": "a dtype baton does not have yet",
        "uint64": "a dtype baton does not have yet",
        "uint": "uint64's alias; baton has no uint64 yet",
        "fromfile": "raises NotImplementedError in JAX too (host-side I/O)",
        "fromiter": "raises NotImplementedError in JAX too (host-side)",
        "ufunc": "JAX's ufunc class over a scalar function: not built yet",
        "frompyfunc": "makes a ufunc: not built yet",
        "roots": "needs a general (nonsymmetric) eigensolver",
        "einsum_path": "returns opt_einsum's path objects: not built yet",
    },
    "jax.lax": {
        "bitcast_convert_type": "needs a bitcast primitive (NaN payloads cannot "
        "be read arithmetically)",
        "rng_bit_generator": "XLA's backend-defined bit streams; use bt.random",
        "rng_uniform": "XLA's backend-defined bit streams; use bt.random",
        "RandomAlgorithm": "XLA's backend-defined bit streams; use bt.random",
        "DotAlgorithm": "no algorithm selection for dots",
        "DotAlgorithmPreset": "no algorithm selection for dots",
        "AccuracyMode": "no accuracy selection for transcendentals",
        "Tolerance": "no accuracy selection for transcendentals",
        "after_all": "baton's programs have no tokens",
        "create_token": "baton's programs have no tokens",
        "dce_sink": "no effect-ordered dead-code elimination to control",
        "psend": "no point-to-point collectives",
        "precv": "no point-to-point collectives",
        "ragged_all_to_all": "no ragged collectives",
        "scaled_dot": _FLOAT8,
    },
    "jax.nn": {
        "scaled_matmul": _FLOAT8,
        "scaled_dot_general": _FLOAT8,
        "get_scaled_dot_general_config": _FLOAT8,
    },
    "jax.random": {
        "random_gamma_p": "a JAX core.Primitive object; baton's primitives "
        "are not Python objects one can bind",
    },
    "jax.scipy.special": {
        "wofz": "complex special functions: not built yet",
        "sph_harm_y": "complex special functions: not built yet",
    },
}

# In these namespaces, names a module only imports for its own use (modules,
# typing helpers, builtins such as ``map``) are not part of its API.
_OWN_NAMES_ONLY = ("jax.example_libraries.",)
_NOT_API_MODULES = ("typing", "builtins", "functools", "collections", "__future__")


@dataclass
class Coverage:
    jax_name: str
    baton_name: str
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    # For module-valued names: (functions present, functions in JAX's).
    members: dict[str, tuple[int, int]] = field(default_factory=dict)
    # With --checked: present names by verdict.
    matching: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.present) + len(self.missing)

    def classify(self, verdicts: dict[str, str]) -> None:
        """Sorts the present names by the comparison suite's verdicts."""
        for n in self.present:
            v = verdicts.get(n)
            {"passed": self.matching, "failed": self.differing}.get(
                v, self.unchecked
            ).append(n)


def public_names(module: types.ModuleType, skip_primitives: bool) -> list[str]:
    """The public names of ``module``: its functions (as jnp_coverage lists
    them) and its other names; ``*_p`` primitives left out if asked."""
    names = set(jnp_coverage.public_functions(module))
    names |= set(jnp_coverage.other_names(module))
    names |= {
        n
        for n in dir(module)
        if not n.startswith("_") and isinstance(getattr(module, n), types.ModuleType)
    }
    if skip_primitives:
        names = {n for n in names if not n.endswith("_p")}
    if module.__name__.startswith(_OWN_NAMES_ONLY):
        names = {n for n in names if _is_api(getattr(module, n))}
        # stax's layers without parameters are (init_fun, apply_fun) pairs.
        names |= {
            n
            for n in dir(module)
            if not n.startswith("_")
            and isinstance(getattr(module, n), tuple)
            and len(getattr(module, n)) == 2
            and all(map(callable, getattr(module, n)))
        }
    return sorted(names)


def _is_api(value: object) -> bool:
    """Not a module, a typing construct, a standard-library helper or one of
    JAX's private utilities (``safe_map``); ``functools.partial`` layers
    (stax's ``Conv``) are API."""
    if isinstance(value, types.ModuleType):
        return False
    if isinstance(value, functools.partial):
        return True
    mod = getattr(value, "__module__", None) or type(value).__module__ or ""
    return mod.split(".")[0] not in _NOT_API_MODULES and mod not in (
        "jax._src.util",
        "jaxlib.utils",
    )


def _import(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def coverage(jax_name: str, baton_name: str) -> Coverage:
    """Present and missing public names of ``jax_name`` in ``baton_name``."""
    jmod = importlib.import_module(jax_name)
    bmod = _import(baton_name)
    c = Coverage(jax_name, baton_name)
    for n in public_names(jmod, skip_primitives=jax_name == "jax.lax"):
        have = bmod is not None and hasattr(bmod, n)
        (c.present if have else c.missing).append(n)
        jv = getattr(jmod, n)
        if isinstance(jv, types.ModuleType) and jax_name.startswith("jax.scipy"):
            fns = jnp_coverage.public_functions(jv)
            bv = getattr(bmod, n, None) if have else None
            got = sum(1 for f in fns if bv is not None and hasattr(bv, f))
            c.members[n] = (got, len(fns))
    return c


def run(only: list[str] | None = None) -> list[Coverage]:
    import jax

    jax.config.update("jax_enable_x64", False)
    pairs = [p for p in PAIRS if not only or p[0] in only]
    return [coverage(j, b) for j, b in pairs]


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


def render(results: list[Coverage], verbose: bool, checked: bool = False) -> str:
    w = max([20] + [len(c.jax_name) for c in results])
    if checked:
        head = (
            f"{'namespace':<{w}} {'names':>6} {'matching':>9} {'%':>6} "
            f"{'differ':>7} {'unchecked':>10} {'missing':>8}"
        )
    else:
        head = f"{'namespace':<{w}} {'present':>8} {'of':>5} {'%':>6}   members"
    lines = [head, "-" * len(head)]
    for c in results:
        if checked:
            lines.append(
                f"{c.jax_name:<{w}} {c.total:>6} {len(c.matching):>9} "
                f"{_pct(len(c.matching), c.total):>5.1f}% {len(c.differing):>7} "
                f"{len(c.unchecked):>10} {len(c.missing):>8}"
            )
            continue
        extra = ""
        if c.members:
            got = sum(g for g, _ in c.members.values())
            tot = sum(t for _, t in c.members.values())
            extra = f"{got}/{tot} functions of submodules"
        lines.append(
            f"{c.jax_name:<{w}} {len(c.present):>8} {c.total:>5} "
            f"{_pct(len(c.present), c.total):>5.1f}%   {extra}"
        )
    if verbose:
        for c in results:
            why = LEFT_OUT.get(c.jax_name, {})
            plain = [n for n in c.missing if n not in why]
            groups = [("missing", plain)]
            if checked:
                groups = [
                    ("differing", c.differing),
                    ("unchecked", c.unchecked),
                    *groups,
                ]
            for title, names in groups:
                if names:
                    lines += [
                        "",
                        f"{c.jax_name}: {title} {len(names)}",
                        "  " + " ".join(names),
                    ]
            left = [n for n in c.missing if n in why]
            if left:
                lines += ["", f"{c.jax_name}: missing, and why {len(left)}"]
                lines += [f"  {n}: {why[n]}" for n in left]
    return "\n".join(lines)


def load_verdicts(paths: list[str]) -> dict[str, dict[str, str]]:
    """Merges the files the comparison suite wrote (one per pytest process):
    a name is "failed" if any run failed it."""
    merged: dict[str, dict[str, str]] = {}
    for path in paths:
        with open(path) as f:
            for ns, names in json.load(f).items():
                into = merged.setdefault(ns, {})
                for n, v in names.items():
                    into[n] = "failed" if "failed" in (v, into.get(n)) else v
    return merged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated JAX namespaces (jax.lax,...)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the names")
    ap.add_argument(
        "--checked",
        nargs="+",
        metavar="FILE",
        help="verdicts written by tests/jax_compat under BATON_API_COVERAGE",
    )
    ap.add_argument(
        "--require",
        type=float,
        metavar="PCT",
        help="with --checked: fail unless every namespace is at least PCT%% "
        "present and matching and none differs",
    )
    a = ap.parse_args()
    results = run(a.only.split(",") if a.only else None)
    if a.checked:
        verdicts = load_verdicts(a.checked)
        for c in results:
            c.classify(verdicts.get(c.jax_name, {}))
    print(render(results, a.verbose, checked=bool(a.checked)))
    if a.require is not None:
        if not a.checked:
            ap.error("--require needs --checked")
        bad = [
            f"{c.jax_name}: {_pct(len(c.matching), c.total):.1f}% matching, "
            f"{len(c.differing)} differing"
            for c in results
            if _pct(len(c.matching), c.total) < a.require or c.differing
        ]
        if bad:
            print(f"\nbelow {a.require:g}% present and matching, or differing:")
            print("\n".join("  " + b for b in bad))
            sys.exit(1)


if __name__ == "__main__":
    main()
