"""Vector products: cross, vecdot, matvec, vecmat (batch dimensions
broadcast as in numpy 2 / jax.numpy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax

__all__ = ["cross", "matvec", "vecdot", "vecmat"]


def _component(t: Any, i: int) -> Any:
    nd = len(t.shape)
    lo = [0] * nd
    hi = list(t.shape)
    lo[-1], hi[-1] = i, i + 1
    return lax.reshape(lax.slice(t, lo, hi), tuple(t.shape[:-1]))


def _cross_impl(a: Any, b: Any, *, axisa: int, axisb: int, axisc: int) -> Any:
    x, y = _ops.promote(a, b)
    x = lax.transpose(x, [k for k in range(len(x.shape)) if k != axisa] + [axisa])
    y = lax.transpose(y, [k for k in range(len(y.shape)) if k != axisb] + [axisb])
    n, m = x.shape[-1], y.shape[-1]
    a0, a1 = _component(x, 0), _component(x, 1)
    b0, b1 = _component(y, 0), _component(y, 1)
    a2 = _component(x, 2) if n == 3 else None
    b2 = _component(y, 2) if m == 3 else None
    z = lax.sub(lax.mul(a0, b1), lax.mul(a1, b0))
    if n == 2 and m == 2:
        return z
    c0 = (
        lax.sub(lax.mul(a1, b2), lax.mul(a2, b1))
        if (a2 is not None and b2 is not None)
        else (lax.mul(a1, b2) if a2 is None else lax.neg(lax.mul(a2, b1)))
    )
    c1 = (
        lax.sub(lax.mul(a2, b0), lax.mul(a0, b2))
        if (a2 is not None and b2 is not None)
        else (lax.neg(lax.mul(a0, b2)) if a2 is None else lax.mul(a2, b0))
    )
    parts = [c0, c1, z]
    shape = np.broadcast_shapes(*(tuple(p.shape) for p in parts))
    parts = [lax.reshape(lax.broadcast_to(p, shape), (*shape, 1)) for p in parts]
    c = lax.concatenate(parts, len(shape))
    nd = len(c.shape)
    ax = axisc if axisc >= 0 else axisc + nd
    perm = list(range(nd - 1))
    perm.insert(ax, nd - 1)
    return lax.transpose(c, perm) if ax != nd - 1 else c


def cross(
    a: Any,
    b: Any,
    axisa: int = -1,
    axisb: int = -1,
    axisc: int = -1,
    axis: int | None = None,
) -> Any:
    """The cross product of 3-vectors (or 2-vectors, the missing component 0)
    along ``axisa``/``axisb`` (``axis`` sets all three); two 2-vectors give
    the scalar z component. Batch dimensions broadcast.

    >>> bnp.cross(bnp.array([1.0, 0.0, 0.0]), bnp.array([0.0, 1.0, 0.0]))
    Array([0., 0., 1.], dtype=float32)
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    sa, sb = _ops.shape_of(a), _ops.shape_of(b)
    if not sa or not sb:
        raise ValueError("cross: a and b must have at least one dimension")
    axa = _ops.normalize_axis(axisa, len(sa), "axisa")
    axb = _ops.normalize_axis(axisb, len(sb), "axisb")
    n, m = sa[axa], sb[axb]
    if n not in (2, 3) or m not in (2, 3):
        raise ValueError(
            "cross: incompatible dimensions for cross product (dimension must be 2 "
            f"or 3), got {n} and {m}"
        )
    ra = sa[:axa] + sa[axa + 1 :]
    rb = sb[:axb] + sb[axb + 1 :]
    try:
        batch = np.broadcast_shapes(ra, rb)
    except ValueError:
        raise ValueError(
            f"cross: the batch shapes {ra} and {rb} do not broadcast"
        ) from None
    axc = axisc
    if not (n == 2 and m == 2):
        axc = _ops.normalize_axis(axisc, len(batch) + 1, "axisc")
    else:
        axc = -1
    return _ops.apply(
        _cross_impl, (a, b), (("axisa", axa), ("axisb", axb), ("axisc", axc))
    )


def _vecdot_impl(a: Any, b: Any, *, axis: int) -> Any:
    x, y = _ops.promote(a, b)
    x = lax.conj(x)  # complex: conj(x1) . x2, as the array API and JAX
    shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    x, y = lax.broadcast_to(x, shape), lax.broadcast_to(y, shape)
    p = lax.bitwise_and(x, y) if x.dtype == np.bool_ else lax.mul(x, y)
    if x.dtype == np.bool_:
        return lax.max(p, (axis,))
    return lax.astype(lax.sum(p, (axis,)), x.dtype)


def vecdot(
    x1: Any,
    x2: Any,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The dot product of vectors along ``axis`` (batch dimensions
    broadcast), in the promoted dtype; complex ``x1`` is conjugated.

    >>> bnp.vecdot(bnp.array([[1.0, 2.0], [3.0, 4.0]]), bnp.array([1.0, 1.0]))
    Array([3., 7.], dtype=float32)
    """
    s1, s2 = _ops.shape_of(x1), _ops.shape_of(x2)
    if not s1 or not s2:
        raise ValueError("vecdot: x1 and x2 must have at least one dimension")
    try:
        shape = np.broadcast_shapes(s1, s2)
    except ValueError:
        raise ValueError(f"vecdot: shapes {s1} and {s2} do not broadcast") from None
    ax = _ops.normalize_axis(axis, len(shape))
    k1 = ax - len(shape) + len(s1)
    k2 = ax - len(shape) + len(s2)
    n1 = s1[k1] if k1 >= 0 else 1
    n2 = s2[k2] if k2 >= 0 else 1
    if n1 != n2:
        raise ValueError(
            f"vecdot: x1 and x2 must have the same length along axis {axis}, got "
            f"{n1} and {n2} (shapes {s1} and {s2})"
        )
    return _ops.apply(_vecdot_impl, (x1, x2), (("axis", ax),))


def _matvec_impl(a: Any, b: Any, *, left: bool) -> Any:
    x, y = _ops.promote(a, b)
    if left:  # vecmat: conj(x) (..., n) @ (..., n, m), as JAX
        x = lax.conj(x)
        r = lax.matmul(lax.reshape(x, (*x.shape[:-1], 1, x.shape[-1])), y)
    else:  # matvec: (..., m, n) @ (..., n)
        r = lax.matmul(x, lax.reshape(y, (*y.shape, 1)))
    return lax.reshape(r, (*r.shape[:-2], r.shape[-1 if left else -2]))


def _matvec_check(
    name: str, mat: tuple[int, ...], vec: tuple[int, ...], k: int
) -> None:
    if len(mat) < 2 or len(vec) < 1:
        raise ValueError(
            f"{name}: needs a matrix (>= 2-D) and a vector (>= 1-D), got shapes "
            f"{mat} and {vec}"
        )
    if mat[k] != vec[-1]:
        raise ValueError(
            f"{name}: the contracted dimensions differ ({mat[k]} and {vec[-1]}; "
            f"shapes {mat} and {vec})"
        )
    try:
        np.broadcast_shapes(mat[:-2], vec[:-1])
    except ValueError:
        raise ValueError(
            f"{name}: batch shapes {mat[:-2]} and {vec[:-1]} do not broadcast"
        ) from None


def matvec(x1: Any, x2: Any, /) -> Any:
    """The matrix-vector product of x1 (..., m, n) and x2 (..., n): shape
    (..., m), batch dimensions broadcast.

    >>> bnp.matvec(bnp.eye(2) * 2, bnp.array([1.0, 3.0]))   # [2., 6.]
    """
    _matvec_check("matvec", _ops.shape_of(x1), _ops.shape_of(x2), -1)
    return _ops.apply(_matvec_impl, (x1, x2), (("left", False),))


def vecmat(x1: Any, x2: Any, /) -> Any:
    """The vector-matrix product of x1 (..., n) and x2 (..., n, m): shape
    (..., m), batch dimensions broadcast.

    >>> bnp.vecmat(bnp.array([1.0, 3.0]), bnp.eye(2) * 2)   # [2., 6.]
    """
    _matvec_check("vecmat", _ops.shape_of(x2), _ops.shape_of(x1), -2)
    return _ops.apply(_matvec_impl, (x1, x2), (("left", True),))
