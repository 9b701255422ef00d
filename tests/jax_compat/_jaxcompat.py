"""The two libraries side by side, and the comparison of their results.

A test builds its program from a `Lib` (`L.api` is `jax` or `baton`, `L.np`
their numpy, `L.lax` their lax), runs it in both on the same numpy inputs
and calls `assert_same(baton_result, jax_result)`: same pytree structure,
same shapes and dtypes, values equal to float32 rounding (rtol 1e-5, atol
1e-6 unless a test says why it needs more).

`BATON_COMPAT_SELF_CHECK=1` runs JAX on both sides: a check of the tests
themselves (every test must then pass), useful while baton's side is
incomplete.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.ad_checkpoint  # noqa: E402, F811 -- jax.ad_checkpoint.checkpoint_name
import jax.numpy as jnp  # noqa: E402

import baton as bt  # noqa: E402
import baton.lax  # noqa: E402
import baton.numpy as bnp  # noqa: E402

try:  # bt.ad_checkpoint (checkpoint_name), as `import jax.ad_checkpoint`
    import baton.ad_checkpoint
except ImportError:  # not there yet: the tests that use it fail, not all
    pass

RTOL = 1e-5
ATOL = 1e-6


@dataclass(frozen=True)
class Lib:
    """One library's namespaces, as a ported program imports them."""

    name: str
    api: Any  # `import jax` / `import baton as jax`
    np: Any  # `import jax.numpy as jnp` / `import baton.numpy as jnp`
    lax: Any  # `from jax import lax` / `from baton import lax`


JAX = Lib("jax", jax, jnp, jax.lax)
SELF_CHECK = os.environ.get("BATON_COMPAT_SELF_CHECK") == "1"
if SELF_CHECK:
    BATON = Lib("baton(self-check: jax)", jax, jnp, jax.lax)
else:
    BATON = Lib("baton", bt, bnp, bt.lax)
LIBS = (BATON, JAX)


def to_host(tree: Any) -> Any:
    """A result as nested Python containers of numpy arrays (the pytree
    structure kept: tuple vs list vs dict)."""
    if isinstance(tree, dict):
        return {k: to_host(v) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # namedtuple
        return type(tree)(*(to_host(v) for v in tree))
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_host(v) for v in tree)
    if tree is None:
        return None
    return np.asarray(tree)


def _describe(x: np.ndarray) -> str:
    with np.printoptions(precision=8, threshold=40, linewidth=200):
        return f"{x.dtype}{list(x.shape)} {x!r}"


def assert_same(
    baton_result: Any,
    jax_result: Any,
    rtol: float = RTOL,
    atol: float = ATOL,
    path: str = "result",
    inputs: Any = None,
) -> None:
    """Assert both results have the same structure, shapes and dtypes and
    values equal within rtol/atol; the message shows both values (and the
    inputs, when given) so that a mismatch can be reported as it is."""
    b, j = to_host(baton_result), to_host(jax_result)
    _assert_same(b, j, rtol, atol, path, inputs)


def _assert_same(b, j, rtol, atol, path, inputs) -> None:
    where = f"{path}" + ("" if inputs is None else f" (inputs: {inputs!r})")
    if isinstance(j, dict):
        assert isinstance(b, dict), f"{where}: baton gave {type(b).__name__}, jax dict"
        assert sorted(b) == sorted(j), f"{where}: keys {sorted(b)} vs {sorted(j)}"
        for k in j:
            _assert_same(b[k], j[k], rtol, atol, f"{path}[{k!r}]", inputs)
        return
    if isinstance(j, (list, tuple)):
        assert type(b) is type(j), (
            f"{where}: baton gave {type(b).__name__}, jax {type(j).__name__}"
        )
        assert len(b) == len(j), f"{where}: {len(b)} leaves vs jax's {len(j)}"
        for n, (bb, jj) in enumerate(zip(b, j)):
            _assert_same(bb, jj, rtol, atol, f"{path}[{n}]", inputs)
        return
    if j is None:
        assert b is None, f"{where}: baton gave {b!r}, jax None"
        return
    assert isinstance(b, np.ndarray), f"{where}: baton gave {type(b).__name__}"
    assert b.shape == j.shape and b.dtype == j.dtype, (
        f"{where}: baton {b.dtype}{list(b.shape)}, jax {j.dtype}{list(j.shape)}\n"
        f"  baton: {_describe(b)}\n  jax:   {_describe(j)}"
    )
    if b.dtype.kind in "biu":
        ok = np.array_equal(b, j)
    else:
        ok = np.allclose(
            b.astype(np.float64),
            j.astype(np.float64),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
        )
    if not ok:
        diff = np.abs(b.astype(np.float64) - j.astype(np.float64))
        raise AssertionError(
            f"{where}: values differ (max abs diff {np.nanmax(diff):.3g}, "
            f"rtol {rtol}, atol {atol})\n"
            f"  baton: {_describe(b)}\n  jax:   {_describe(j)}"
        )


def run_both(
    build: Callable[[Lib], Callable[..., Any]],
    *inputs: Any,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> tuple[Any, Any]:
    """`build(L)(*inputs)` in JAX and in baton, compared; returns (baton, jax)
    results as numpy trees. JAX runs first, so a JAX-side error (a broken
    test) shows as such. JAX's side runs under `jax.jit` (one compilation
    instead of one per eager op: the suite's time budget; XLA's fused results
    equal its eager ones to rounding); baton's runs as written, eagerly
    unless the test jits it."""
    j = to_host(JAX.api.jit(build(JAX))(*inputs))
    b = to_host(build(BATON)(*inputs))
    assert_same(b, j, rtol, atol, inputs=inputs)
    return b, j


def rng_floats(seed: int, shape, low=-1.0, high=1.0) -> np.ndarray:
    """Deterministic float32 inputs in [low, high)."""
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(np.float32)
