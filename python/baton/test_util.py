"""``bt.test_util``: checking derivatives numerically, as ``jax.test_util``.

``check_grads(f, args, order)`` compares baton's forward-mode (``bt.jvp``)
and reverse-mode (``bt.vjp``) derivatives of ``f`` at ``args`` with central
finite differences along random directions, up to ``order`` (each higher
order checks the derivative functions themselves), and raises
``AssertionError`` saying which check failed, by how much. Directions are
drawn from a fixed numpy seed, so a failure is reproducible.

Example::

    from baton.test_util import check_grads
    check_grads(lambda x: bnp.sin(x) * x, (1.5,), order=2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from baton import _dtypes, tree

__all__ = ["check_grads", "check_jvp", "check_vjp"]

# Finite-difference step and default tolerances by dtype (float32 central
# differences with a 1e-4 step carry ~1e-3 of rounding).
EPS = 1e-4
_TOLERANCE = {
    np.dtype(np.float16): 1e-1,
    np.dtype(np.float32): 2e-2,
    np.dtype(np.float64): 1e-5,
}


def _host(x: Any) -> np.ndarray:
    return np.asarray(x)


def _tolerance(leaves: Sequence[Any], given: float | None) -> float:
    if given is not None:
        return given
    tols = [_TOLERANCE.get(_float_dtype(x), 2e-2) for x in leaves]
    return max(tols, default=2e-2)


def _float_dtype(x: Any) -> np.dtype:
    d = _dtypes.canonical(np.asarray(x).dtype)  # as baton computes (x64)
    return d if np.issubdtype(d, np.floating) else np.dtype(np.float32)


def _random_like(rng: np.random.RandomState, x: Any) -> np.ndarray:
    a = np.asarray(x)
    return rng.standard_normal(a.shape).astype(_float_dtype(a))


def _add(args: Sequence[Any], direction: Sequence[Any], step: float) -> list:
    return tree.map(
        lambda x, d: (
            np.asarray(x, np.float64) + step * np.asarray(d, np.float64)
        ).astype(_float_dtype(x)),
        list(args),
        list(direction),
    )


def _inner(a: Any, b: Any) -> float:
    la, lb = tree.leaves(a), tree.leaves(b)
    return float(
        sum(
            np.vdot(_host(x).astype(np.float64), _host(y).astype(np.float64))
            for x, y in zip(la, lb)
        )
    )


def _numerical_jvp(
    f: Callable[..., Any], args: Sequence[Any], tangents: Sequence[Any], eps: float
) -> Any:
    plus = f(*_add(args, tangents, eps / 2))
    minus = f(*_add(args, tangents, -eps / 2))
    return tree.map(
        lambda p, m: (_host(p).astype(np.float64) - _host(m).astype(np.float64)) / eps,
        plus,
        minus,
    )


def _assert_close(got: Any, want: Any, atol: float, rtol: float, what: str) -> None:
    g_leaves, w_leaves = tree.leaves(got), tree.leaves(want)
    if len(g_leaves) != len(w_leaves):
        raise AssertionError(
            f"{what}: {len(g_leaves)} outputs, expected {len(w_leaves)}"
        )
    for i, (g, w) in enumerate(zip(g_leaves, w_leaves)):
        g64, w64 = _host(g).astype(np.float64), _host(w).astype(np.float64)
        if g64.shape != w64.shape:
            raise AssertionError(
                f"{what}: output {i} has shape {g64.shape}, expected {w64.shape}"
            )
        np.testing.assert_allclose(
            g64, w64, atol=atol, rtol=rtol, err_msg=f"{what}: output {i}"
        )


def check_jvp(
    f: Callable[..., Any],
    f_jvp: Callable[..., Any],
    args: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
) -> None:
    """``f_jvp(args, tangents)`` (as ``bt.jvp(f, ...)``) agrees with central
    differences of ``f`` along a random tangent."""
    rng = np.random.RandomState(0)
    args = list(args)
    tangents = tree.map(lambda x: _random_like(rng, x), args)
    leaves = tree.leaves(args)
    tol_a, tol_r = _tolerance(leaves, atol), _tolerance(leaves, rtol)
    eps = eps or EPS
    _, tangent_out = f_jvp(tuple(args), tuple(tangents))
    expected = _numerical_jvp(f, args, tangents, eps)
    _assert_close(
        tangent_out, expected, tol_a, tol_r, "JVP tangent vs finite differences"
    )


def check_vjp(
    f: Callable[..., Any],
    f_vjp: Callable[..., Any],
    args: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
) -> None:
    """``f_vjp(*args)`` (as ``bt.vjp(f, ...)``) is the transpose of the
    derivative: <vjp(ct), t> equals <ct, numerical jvp(t)> for random t, ct."""
    rng = np.random.RandomState(0)
    args = list(args)
    out, pullback = f_vjp(*args)
    tangents = tree.map(lambda x: _random_like(rng, x), args)
    cotangent = tree.map(lambda y: _random_like(rng, y), out)
    ct_in = pullback(cotangent)
    leaves = tree.leaves(args)
    tol_a, tol_r = _tolerance(leaves, atol), _tolerance(leaves, rtol)
    eps = eps or EPS
    got = _inner(list(ct_in), tangents)
    want = _inner(cotangent, _numerical_jvp(f, args, tangents, eps))
    _assert_close(got, want, tol_a, tol_r, "VJP inner product vs finite differences")


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
) -> None:
    """Checks ``f``'s derivatives at ``args`` up to ``order`` in the given
    ``modes`` ("fwd": bt.jvp, "rev": bt.vjp) against finite differences;
    ``AssertionError`` on the first that disagrees."""
    from baton._autodiff import jvp, vjp

    if not isinstance(order, int) or order < 1:
        raise ValueError(f"check_grads: order must be a positive int, got {order!r}")
    modes = tuple(modes)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(
                f"check_grads: unknown mode {m!r} (expected 'fwd' or 'rev')"
            )
    args = list(args)

    def check(f: Callable[..., Any], args: list, order: int) -> None:
        if "fwd" in modes:
            check_jvp(f, lambda p, t: jvp(f, p, t), args, atol, rtol, eps)
            if order > 1:
                # The JVP along a fixed tangent, as a function of the primals.
                rng = np.random.RandomState(1)
                t = tree.map(lambda x: _random_like(rng, x), args)
                check(lambda *p: jvp(f, tuple(p), tuple(t))[1], args, order - 1)
        if "rev" in modes:
            check_vjp(f, lambda *p: vjp(f, *p), args, atol, rtol, eps)
            if order > 1:
                # The VJP with a fixed cotangent, as a function of the primals.
                rng = np.random.RandomState(2)
                out = f(*args)
                ct = tree.map(lambda y: _random_like(rng, y), out)
                check(lambda *p: vjp(f, *p)[1](ct), args, order - 1)

    check(f, args, order)
