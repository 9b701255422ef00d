#!/usr/bin/env python3
"""Which public names of JAX's namespaces outside jax.numpy baton has.

For each namespace pair (jax / baton (the top level), jax.lax / baton.lax,
jax.nn / baton.nn, jax.random / baton.random, jax.numpy.fft, jax.scipy.fft,
jax.scipy.special,
jax.scipy.signal, jax.scipy.stats, jax.scipy.linalg, jax.tree_util,
jax.example_libraries.stax / .optimizers) lists the
public names of the JAX module (``*_p`` primitives of jax.lax left out) and
whether the baton module has each. A name whose JAX value is a module
(``jax.scipy.stats.norm``) also counts its functions. Presence only: the
values are checked by tests/jax_compat/test_namespaces_vs_jax.py (and, for
jax.numpy, by tools/jnp_coverage.py, whose name listing this reuses).

    python3 tools/namespace_coverage.py              # the table
    python3 tools/namespace_coverage.py -v           # and the missing names
    python3 tools/namespace_coverage.py --only jax.nn -v
    python3 tools/namespace_coverage.py --only jax -v   # the top level
"""

from __future__ import annotations

import argparse
import functools
import importlib
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

    @property
    def total(self) -> int:
        return len(self.present) + len(self.missing)


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


def render(results: list[Coverage], verbose: bool) -> str:
    w = max([20] + [len(c.jax_name) for c in results])
    lines = [
        f"{'namespace':<{w}} {'present':>8} {'of':>5} {'%':>6}   members",
        "-" * (w + 40),
    ]
    for c in results:
        pct = 100.0 * len(c.present) / c.total if c.total else 0.0
        extra = ""
        if c.members:
            got = sum(g for g, _ in c.members.values())
            tot = sum(t for _, t in c.members.values())
            extra = f"{got}/{tot} functions of submodules"
        lines.append(
            f"{c.jax_name:<{w}} {len(c.present):>8} {c.total:>5} {pct:>5.1f}%   {extra}"
        )
    if verbose:
        for c in results:
            lines += [
                "",
                f"{c.jax_name}: missing {len(c.missing)}",
                "  " + " ".join(c.missing),
            ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated JAX namespaces (jax.lax,...)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list missing names")
    a = ap.parse_args()
    print(render(run(a.only.split(",") if a.only else None), a.verbose))


if __name__ == "__main__":
    main()
