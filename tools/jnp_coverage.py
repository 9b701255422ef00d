#!/usr/bin/env python3
"""How much of jax.numpy baton.numpy covers, checked on generated inputs.

For every public function of the installed jax.numpy (classes, dtypes and
constants are counted apart), says whether baton.numpy has it and whether it
gives what jax.numpy gives on the inputs of tools/jnp_probes.py: the same
structure, shapes, dtypes and values (float32 rounding; NaNs alike), called
eagerly and, where every argument is an array and jax.jit accepts the call,
under bt.jit. A function present but without probes is "unchecked" and does
not count as matching.

    python3 tools/jnp_coverage.py                  # the table
    python3 tools/jnp_coverage.py --names sort,cumsum -v
    python3 tools/jnp_coverage.py --write docs/jnp_coverage.md

JAX is needed (bench/requirements.txt pins it); it runs on the CPU with x64
off. tests/jax_compat/test_jnp_coverage.py runs it in CI.
"""

from __future__ import annotations

import argparse
import copy
import inspect
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jnp_probes  # noqa: E402

MATCHES, DIFFERS, UNCHECKED, MISSING = (
    "matches",
    "differs",
    "present, unchecked",
    "missing",
)
# Functions whose results have no values to compare, only shapes and dtypes.
_NO_VALUES = {"empty", "empty_like"}


@dataclass
class Entry:
    name: str
    status: str
    detail: str = ""
    checks: int = 0
    problems: list[str] = field(default_factory=list)


def public_functions(jnp: types.ModuleType) -> list[str]:
    """The public callables of jax.numpy that are not classes (dtypes,
    finfo, ufunc, ...), in sorted order."""
    out = []
    for n in dir(jnp):
        if n.startswith("_"):
            continue
        v = getattr(jnp, n)
        if isinstance(v, types.ModuleType) or inspect.isclass(v) or not callable(v):
            continue
        out.append(n)
    return sorted(out)


def other_names(jnp: types.ModuleType) -> list[str]:
    """Public names that are not functions: dtypes, classes, constants."""
    funcs = set(public_functions(jnp))
    return sorted(
        n
        for n in dir(jnp)
        if not n.startswith("_")
        and n not in funcs
        and not isinstance(getattr(jnp, n), types.ModuleType)
    )


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        out = [("len", len(x))]
        for v in x:
            out += _leaves(v)
        return out
    return [x]


def _as_numpy(x: Any) -> Any:
    if isinstance(x, (np.dtype, type, str, bool, int, float)) or x is None:
        return x
    return np.asarray(x)


def compare(name: str, got: Any, want: Any) -> str | None:
    """None when `got` (baton) is what `want` (JAX) is; else why not."""
    g, w = _leaves(got), _leaves(want)
    if len(g) != len(w):
        return f"structure: {len(g)} leaves, JAX has {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        if isinstance(b, tuple) and b and b[0] == "len":
            if a != b:
                return f"structure: {a} vs JAX {b}"
            continue
        a, b = _as_numpy(a), _as_numpy(b)
        if not isinstance(b, np.ndarray):
            if isinstance(b, (type, np.dtype)):
                if np.dtype(a) != np.dtype(b):
                    return f"leaf {i}: {a} vs JAX {b}"
            elif a != b and not (a is None and b is None):
                return f"leaf {i}: {a!r} vs JAX {b!r}"
            continue
        if not isinstance(a, np.ndarray):
            return f"leaf {i}: {type(a).__name__} where JAX gives an array"
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"leaf {i}: {a.dtype}{list(a.shape)} vs JAX {b.dtype}{list(b.shape)}"
        if name in _NO_VALUES:
            continue
        if np.issubdtype(b.dtype, np.inexact):
            ok = np.allclose(a, b, rtol=2e-5, atol=2e-6, equal_nan=True)
        else:
            ok = np.array_equal(a, b)
        if not ok:
            return f"leaf {i}: values differ (max |diff| {_maxdiff(a, b)})"
    return None


def _maxdiff(a: np.ndarray, b: np.ndarray) -> str:
    try:
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        return f"{np.nanmax(d):.3g}" if d.size else "-"
    except (TypeError, ValueError):
        return "?"


def _call(f: Callable, args: tuple, kwargs: dict) -> Any:
    return f(*copy.deepcopy(args), **copy.deepcopy(kwargs))


def _jitted(jit: Callable, f: Callable, args: tuple, kwargs: dict) -> Any:
    return jit(lambda *xs: f(*xs, **kwargs))(*copy.deepcopy(args))


def check(name: str, jax: Any, jnp: Any, bt: Any, bnp: Any) -> Entry:
    if not hasattr(bnp, name):
        return Entry(name, MISSING)
    probes = jnp_probes.PROBES.get(name)
    if not probes:
        return Entry(name, UNCHECKED)
    e = Entry(name, MATCHES)
    jf, bf = getattr(jnp, name), getattr(bnp, name)
    for args, kwargs in probes:
        what = f"{name}{_describe(args, kwargs)}"
        try:
            want = _call(jf, args, kwargs)
        except Exception as ex:  # a probe JAX itself refuses is a bad probe
            e.problems.append(f"{what}: JAX raised {type(ex).__name__}: {ex}")
            continue
        try:
            got = _call(bf, args, kwargs)
            why = compare(name, got, want)
        except Exception as ex:
            why = f"raised {type(ex).__name__}: {str(ex)[:200]}"
        e.checks += 1
        if why:
            e.status, e.detail = DIFFERS, f"{what}: {why}"
            return e
        if not args or not all(isinstance(a, np.ndarray) for a in args):
            continue
        try:
            want = _jitted(jax.jit, jf, args, kwargs)
        except Exception:
            continue  # not traceable in JAX either (data-dependent shapes)
        try:
            got = _jitted(bt.jit, bf, args, kwargs)
            why = compare(name, got, want)
        except Exception as ex:
            why = f"raised {type(ex).__name__}: {str(ex)[:200]}"
        e.checks += 1
        if why:
            e.status, e.detail = DIFFERS, f"{what} under jit: {why}"
            return e
    if e.checks == 0:
        e.status = UNCHECKED
    return e


def _describe(args: tuple, kwargs: dict) -> str:
    def one(a: Any) -> str:
        if isinstance(a, np.ndarray):
            return f"{a.dtype}{list(a.shape)}"
        if callable(a):
            return "<fn>"
        if isinstance(a, (list, tuple)):
            return "[" + ", ".join(one(x) for x in a) + "]"
        return repr(a)

    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def run(names: list[str] | None = None) -> tuple[list[Entry], list[str]]:
    import jax

    jax.config.update("jax_enable_x64", False)
    import jax.numpy as jnp

    import baton as bt
    import baton.numpy as bnp

    funcs = public_functions(jnp)
    if names:
        unknown = sorted(set(names) - set(funcs))
        if unknown:
            raise SystemExit(f"not public functions of jax.numpy: {unknown}")
        funcs = [n for n in funcs if n in names]
    entries = [check(n, jax, jnp, bt, bnp) for n in funcs]
    others = [n for n in other_names(jnp) if not hasattr(bnp, n)]
    return entries, others


def summary(entries: list[Entry]) -> dict[str, int]:
    counts = {s: 0 for s in (MATCHES, DIFFERS, UNCHECKED, MISSING)}
    for e in entries:
        counts[e.status] += 1
    return counts


def render(entries: list[Entry], missing_others: list[str], jax_version: str) -> str:
    c = summary(entries)
    n = len(entries)
    pct = 100.0 * c[MATCHES] / n if n else 0.0
    lines = [
        "# baton.numpy against jax.numpy",
        "",
        "Written by `python3 tools/jnp_coverage.py --write docs/jnp_coverage.md`"
        f" against jax {jax_version} (x64 off); checked in CI by",
        "`tests/jax_compat/test_jnp_coverage.py`. A function *matches* when it",
        "gives jax.numpy's structure, shapes, dtypes and values (float32",
        "rounding) on every probe of `tools/jnp_probes.py`, eagerly and under",
        "`bt.jit` where JAX's jit takes the call.",
        "",
        "| public functions of jax.numpy | present and matching | differs |"
        " present, unchecked | missing |",
        "| --- | --- | --- | --- | --- |",
        f"| {n} | {c[MATCHES]} ({pct:.1f}%) | {c[DIFFERS]} | {c[UNCHECKED]} |"
        f" {c[MISSING]} |",
        "",
    ]
    for status, title in (
        (DIFFERS, "Present but different (each a bug to fix)"),
        (UNCHECKED, "Present, without probes"),
        (MISSING, "Missing functions"),
    ):
        group = [e for e in entries if e.status == status]
        if not group:
            continue
        lines += [f"## {title} ({len(group)})", ""]
        if status == DIFFERS:
            lines += [f"- `{e.name}`: {e.detail}" for e in group]
        else:
            lines.append(", ".join(f"`{e.name}`" for e in group))
        lines.append("")
    if missing_others:
        lines += [
            f"## Missing dtypes, classes and constants ({len(missing_others)})",
            "",
            ", ".join(f"`{n}`" for n in missing_others),
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--names", help="comma-separated functions to check")
    ap.add_argument("--write", metavar="PATH", help="write the markdown report")
    ap.add_argument("-v", "--verbose", action="store_true", help="every function")
    a = ap.parse_args()
    import jax

    entries, others = run(a.names.split(",") if a.names else None)
    for e in entries:
        if a.verbose or e.status == DIFFERS:
            print(f"{e.status:>20}  {e.name}  {e.detail}")
        for p in e.problems:
            print(f"{'bad probe':>20}  {p}")
    c = summary(entries)
    print(
        f"jax.numpy {jax.__version__}: {len(entries)} public functions; "
        + ", ".join(f"{k} {v}" for k, v in c.items())
    )
    if a.write:
        with open(a.write, "w") as f:
            f.write(render(entries, others, jax.__version__))
        print(f"wrote {a.write}")


if __name__ == "__main__":
    main()
