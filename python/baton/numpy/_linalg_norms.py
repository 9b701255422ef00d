"""Norms of ``baton.numpy.linalg`` (norm, vector_norm, matrix_norm, with
jnp's ``ord``/``axis``/``keepdims``) and its array-API helpers (trace,
diagonal, matrix_transpose, outer, cross, vecdot, matmul, tensordot),
which act on the last axes as jax.numpy.linalg's do.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from baton import _linalg_core as core
from baton import _ops
from baton._baton import lax
from baton.numpy import _linalg, _matrices, _shapes
from baton.numpy import _vector as _vectors

__all__ = [
    "cross",
    "diagonal",
    "matmul",
    "matrix_norm",
    "matrix_transpose",
    "norm",
    "outer",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]


def _run(impl: Any, args: tuple, **static: Any) -> Any:
    return _ops.apply(impl, args, tuple(sorted(static.items())))


def _keep(r: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """r (reduced over axes) reshaped with those axes as size 1."""
    return lax.reshape(r, tuple(1 if d in axes else n for d, n in enumerate(shape)))


def _vector(x: Any, ord: Any, axis: tuple[int, ...]) -> Any:
    ax = lax.abs(x)
    if ord is None or ord == 2:
        return lax.sqrt(lax.sum(lax.mul(x, x), axis))
    if ord == math.inf:
        return lax.max(ax, axis)
    if ord == -math.inf:
        return lax.min(ax, axis)
    if ord == 0:
        return lax.sum(lax.astype(lax.ne(x, 0), x.dtype), axis)
    if ord == 1:
        return lax.sum(ax, axis)
    p = float(ord)
    return lax.pow(lax.sum(lax.pow(ax, p), axis), 1.0 / p)


def _matrix(x: Any, ord: Any, axis: tuple[int, int]) -> Any:
    r, c = axis
    if ord is None or ord == "fro":
        return lax.sqrt(lax.sum(lax.mul(x, x), axis))
    if ord in (1, -1):  # column sums (over rows), then max / min
        sums = lax.sum(lax.abs(x), (r,))
        f = lax.max if ord == 1 else lax.min
        return f(sums, (c - 1 if c > r else c,))
    if ord in (math.inf, -math.inf):
        sums = lax.sum(lax.abs(x), (c,))
        f = lax.max if ord == math.inf else lax.min
        return f(sums, (r - 1 if r > c else r,))
    # 2, -2, nuc: singular values of the matrices moved last.
    rest = [d for d in range(x.ndim) if d not in axis]
    s = core.singular_values(lax.transpose(x, (*rest, r, c)))
    last = (s.ndim - 1,)
    if ord == "nuc":
        return lax.sum(s, last)
    return lax.max(s, last) if ord == 2 else lax.min(s, last)


def _norm(x, *, dt, rt, ord, axis, keepdims, matrix):
    t = core.operand(x, dt)
    shape = tuple(t.shape)
    out = _matrix(t, ord, axis) if matrix else _vector(t, ord, axis)
    if keepdims:
        out = _keep(out, shape, axis)
    return core.cast_back(out, rt)


_MATRIX_ORDS = (None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def _types(x: Any, what: str) -> tuple[np.dtype, np.dtype]:
    d = _ops.dtype_of(x)
    d = _ops.result_dtype(x) if d is None else d
    return core.float_dtype(d, what), core.result_dtype(d)


def _moduli(x: Any, ord: Any = None, matrix: bool = False) -> Any:
    """Complex ``x`` as ``|x|`` for the norms that depend only on the
    elements' moduli (every vector norm; the matrix norms but 2, -2 and
    "nuc", which need the complex SVD baton's LAPACK path lacks): the same
    value as JAX's. Real ``x`` unchanged."""
    d = _ops.dtype_of(x)
    if d is None or d.kind != "c" or (matrix and ord in (2, -2, "nuc")):
        return x
    return _ops.apply(_abs_impl, (x,))


def _abs_impl(x: Any) -> Any:
    return lax.abs(_ops.as_tracer(x))



def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """A vector or matrix norm, as jnp.linalg.norm: axis None with ord None
    is the 2-norm of x flattened; axis None otherwise needs x of rank 1 or
    2; an int axis gives vector norms (ord 2, 1, 0, inf, -inf or any p), a
    pair of axes matrix norms (ord "fro", "nuc", 1, -1, 2, -2, inf,
    -inf)."""
    shape = _ops.shape_of(x)
    nd = len(shape)
    if axis is None:
        if ord is None:
            x = _moduli(x)
            dt, rt = _types(x, "linalg.norm")
            flat_axes = tuple(range(nd))
            return _run(
                _norm,
                (x,),
                dt=dt,
                rt=rt,
                ord=None,
                axis=flat_axes,
                keepdims=keepdims,
                matrix=False,
            )
        if nd not in (1, 2):
            raise ValueError(
                f"linalg.norm: improper number of dimensions to norm: x has shape "
                f"{shape}; with ord={ord!r} and axis=None x must be 1- or 2-D"
            )
        axis = tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        axes = tuple(_ops.normalize_axis(a, nd, "linalg.norm: axis") for a in axis)
        if len(axes) == 1:
            return vector_norm(
                x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord
            )
        if len(axes) != 2 or axes[0] == axes[1]:
            raise ValueError(
                f"linalg.norm: axis must be an int or two distinct ints, got {axis!r}"
            )
        return matrix_norm(
            x, keepdims=keepdims, ord="fro" if ord is None else ord, _axis=axes
        )
    return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)


def vector_norm(
    x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2
) -> Any:
    """The vector p-norm of x along axis (None: all of x, flattened)."""
    x = _moduli(x)
    if isinstance(ord, str):
        raise ValueError(f"linalg.vector_norm: invalid ord {ord!r} for a vector norm")
    nd = len(_ops.shape_of(x))
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(sorted(_ops.normalize_axis(a, nd) for a in axis))
    else:
        axes = (_ops.normalize_axis(operator.index(axis), nd),)
    dt, rt = _types(x, "linalg.vector_norm")
    return _run(
        _norm, (x,), dt=dt, rt=rt, ord=ord, axis=axes, keepdims=keepdims, matrix=False
    )


def matrix_norm(
    x: Any,
    /,
    *,
    keepdims: bool = False,
    ord: Any = "fro",
    _axis: tuple[int, int] | None = None,
) -> Any:
    """The matrix norm ord ("fro", "nuc", 1, -1, 2, -2, inf, -inf) of the
    last two dimensions of x."""
    x = _moduli(x, ord, matrix=True)
    shape = _ops.shape_of(x)
    core.check_matrix(shape, "linalg.matrix_norm", "x")
    if ord not in _MATRIX_ORDS:
        raise ValueError(
            f"linalg.norm: invalid ord {ord!r} for a matrix norm; use "
            "'fro', 'nuc', 1, -1, 2, -2, inf or -inf"
        )
    axis = (len(shape) - 2, len(shape) - 1) if _axis is None else _axis
    dt, rt = _types(x, "linalg.matrix_norm")
    return _run(
        _norm, (x,), dt=dt, rt=rt, ord=ord, axis=axis, keepdims=keepdims, matrix=True
    )


# ---- array-API helpers ----


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The sum of the diagonal (offset) of x's last two dimensions."""
    return _matrices.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonal (offset) of x's last two dimensions."""
    return _matrices.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def matrix_transpose(x: Any, /) -> Any:
    """x with its last two dimensions swapped."""
    core.check_matrix(_ops.shape_of(x), "linalg.matrix_transpose", "x")
    return _shapes.swapaxes(x, -1, -2)


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two vectors."""
    for name, x in (("x1", x1), ("x2", x2)):
        if len(_ops.shape_of(x)) != 1:
            raise ValueError(
                f"linalg.outer: {name} must be 1-D, got shape {_ops.shape_of(x)}"
            )
    return _linalg.outer(x1, x2)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-vectors along axis."""
    for name, x in (("x1", x1), ("x2", x2)):
        s = _ops.shape_of(x)
        if not s or s[axis] != 3:
            raise ValueError(
                f"linalg.cross: {name} must have size 3 along axis "
                f"{axis}, got shape {s}"
            )
    return _vectors.cross(x1, x2, axis=axis)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None) -> Any:
    """The dot product of vectors along axis (batch dimensions broadcast)."""
    del precision
    return _vectors.vecdot(x1, x2, axis=axis)


def matmul(x1: Any, x2: Any, /, *, precision: Any = None) -> Any:
    """numpy's matmul."""
    del precision
    return _linalg.matmul(x1, x2)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None) -> Any:
    """numpy's tensordot."""
    del precision
    return _linalg.tensordot(x1, x2, axes=axes)
