"""Matrices built from vectors or read along diagonals: kron, vander,
diag, diagflat, diagonal, trace.

Compositions of the other ``baton.numpy`` functions and ``bt.lax``; most
run as one program through ``_ops.apply`` (one compile per static
parameters and argument signature), eagerly or inside ``bt.jit``.
Semantics are jax.numpy's.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _index_plan, _ops
from baton._baton import lax
from baton.numpy import _creation as _cr
from baton.numpy import _elementwise as _el
from baton.numpy import _reductions as _red
from baton.numpy import _shapes as _sh
from baton.numpy._selection import (
    _run,
)

_BOOL = np.dtype(np.bool_)

__all__ = [
    "diag",
    "diagflat",
    "diagonal",
    "kron",
    "trace",
    "vander",
]


# ---- kron, vander ----


def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: blocks ``a[i, j] * b`` (shapes padded with
    leading 1s to the same length).

    >>> bnp.kron(bnp.eye(2), bnp.ones((1, 2))).shape    # (2, 4)
    """
    if _ops.is_scalar(a) or _ops.is_scalar(b):
        return _el.multiply(a, b)
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    d = max(len(sa), len(sb))
    sa, sb = (1,) * (d - len(sa)) + sa, (1,) * (d - len(sb)) + sb
    x = _sh.reshape(a, tuple(v for n in sa for v in (n, 1)))
    y = _sh.reshape(b, tuple(v for n in sb for v in (1, n)))
    return _sh.reshape(_el.multiply(x, y), tuple(p * q for p, q in zip(sa, sb)))


def _vander(x: Any, *, n: int, increasing: bool) -> Any:
    t = _ops.as_tracer(x)
    cols = [lax.full(tuple(t.shape), 1, t.dtype)]
    for _ in range(n - 1):
        cols.append(lax.mul(cols[-1], t))
    if not increasing:
        cols = cols[::-1]
    return lax.concatenate([lax.reshape(c, (t.shape[0], 1)) for c in cols], 1)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of 1-D ``x``: columns x**(N-1), ..., x, 1
    (reversed with increasing=True); N defaults to len(x).

    >>> bnp.vander(bnp.array([1, 2, 3]), 3)    # [[1 1 1] [4 2 1] [9 3 1]]
    """
    s = _ops.shape_of(x)
    if len(s) != 1:
        raise ValueError(f"vander: x must be a one-dimensional array, got shape {s}")
    n = s[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError(f"vander: N must be nonnegative, got {n}")
    if _ops.dtype_of(x) == _BOOL:
        raise TypeError(
            "vander: bool input is not supported; convert x to a number type"
        )
    if n == 0:
        return _cr.zeros((s[0], 0), _ops.result_dtype(x))
    return _run(_vander, (x,), n=n, increasing=bool(increasing))


# ---- diagonals ----


def _diagonal(
    a: Any, *, axes: tuple[int, int], rows: tuple[int, int], cols: tuple[int, int]
) -> Any:
    t = _sh.moveaxis(_ops.as_tracer(a), axes, (-2, -1))
    r = np.arange(*rows, dtype=np.int32)
    c = np.arange(*cols, dtype=np.int32)
    return t[..., r, c]


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset``-th diagonal of the planes of (axis1, axis2), as the
    last axis of the result (the other axes come first, in order).

    >>> bnp.diagonal(bnp.arange(9).reshape(3, 3), 1)    # [1 5]
    """
    s = _ops.shape_of(a)
    if len(s) < 2:
        raise ValueError(
            f"diagonal: the array must have at least 2 dimensions, got shape {s}"
        )
    a1 = _ops.normalize_axis(axis1, len(s), "axis1")
    a2 = _ops.normalize_axis(axis2, len(s), "axis2")
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (both {a1})")
    off = operator.index(offset)
    r0, c0 = max(-off, 0), max(off, 0)
    n = max(0, min(s[a1] - r0, s[a2] - c0))
    return _run(_diagonal, (a,), axes=(a1, a2), rows=(r0, r0 + n), cols=(c0, c0 + n))


def _diag_from(v: Any, *, k: int) -> Any:
    t = _ops.as_tracer(v)
    n = t.shape[0] + abs(k)
    rows = np.arange(t.shape[0]) + max(-k, 0)
    cols = np.arange(t.shape[0]) + max(k, 0)
    flat = (rows * n + cols).astype(_index_plan.index_dtype(n * n))
    z = lax.full((n * n,), 0, t.dtype)
    return lax.reshape(lax.scatter(z, lax.constant(flat), t, 0, "set"), (n, n))


def diag(v: Any, k: int = 0) -> Any:
    """A 2-D array with 1-D ``v`` on its k-th diagonal, or the k-th
    diagonal of a 2-D ``v``.

    >>> bnp.diag(bnp.array([1, 2]))    # [[1 0] [0 2]]
    """
    s = _ops.shape_of(v)
    k = operator.index(k)
    if len(s) == 1:
        return _run(_diag_from, (v,), k=k)
    if len(s) == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: the input must be 1-d or 2-d, got shape {s}")


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-D array with the flattened ``v`` on its k-th diagonal.

    >>> bnp.diagflat(bnp.array([[1, 2]])).shape    # (2, 2)
    """
    return diag(_sh.ravel(v), k)


def trace(
    a: Any,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: Any = None,
    out: None = None,
) -> Any:
    """The sum along a diagonal (``diagonal(a, offset, axis1, axis2).sum(-1)``).

    >>> bnp.trace(bnp.eye(3))    # 3.0
    """
    if out is not None:
        raise NotImplementedError("trace: out= is not supported (arrays are immutable)")
    return _red.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
