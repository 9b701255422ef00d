"""Reductions of ``baton.numpy``: sum, prod, max, min, mean, var, std, all,
any, argmax, argmin.

Result dtypes follow jax.numpy: sum and prod of bool, int8 and int16 give
int32 and of uint8 give uint32; mean, var and std of integers give float32
and of float16/bfloat16 are computed in float32 and rounded once; argmax and
argmin give int32. ``out=`` is not supported (arrays are immutable), nor
are ``initial=`` and ``where=``.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from baton import _dtypes, _ops
from baton._baton import lax

_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]


def _unsupported(name: str, out: Any, initial: Any = None, where: Any = None) -> None:
    if out is not None:
        raise NotImplementedError(
            f"{name}: out= is not supported (arrays are immutable)"
        )
    if initial is not None:
        raise NotImplementedError(f"{name}: initial= is not supported")
    if where is not None:
        raise NotImplementedError(f"{name}: where= is not supported")


def _axes(a: Any, axis: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = _ops.shape_of(a)
    axes = _ops.normalize_axes(axis, len(shape))
    return shape, tuple(range(len(shape))) if axes is None else axes


def _dtype_arg(dtype: Any) -> np.dtype | None:
    return None if dtype is None else _dtypes.canonicalize(dtype)


def _is_half(d: np.dtype) -> bool:
    return d.itemsize == 2 and _ops.is_float(d)


# ---- implementations (on Tracers) ----


def _sum(a: Any, *, axes: tuple[int, ...], dtype: Any, keepdims: bool) -> Any:
    t = _ops.as_tracer(a)
    if dtype is None:
        return lax.sum(t, axes, keepdims)
    # An explicit dtype is the result's too (lax widens small integers to
    # accumulate; numpy and JAX then wrap to the requested dtype).
    return lax.astype(lax.sum(lax.astype(t, dtype), axes, keepdims), dtype)


def _prod(a: Any, *, axes: tuple[int, ...], dtype: Any, keepdims: bool) -> Any:
    t = _ops.as_tracer(a)
    if dtype is None:
        return lax.prod(t, axes, keepdims)
    # An explicit dtype is the result's too (lax widens small integers to
    # accumulate; numpy and JAX then wrap to the requested dtype).
    return lax.astype(lax.prod(lax.astype(t, dtype), axes, keepdims), dtype)


def _max(a: Any, *, axes: tuple[int, ...], keepdims: bool) -> Any:
    return lax.max(_ops.as_tracer(a), axes, keepdims)


def _min(a: Any, *, axes: tuple[int, ...], keepdims: bool) -> Any:
    return lax.min(_ops.as_tracer(a), axes, keepdims)


def _truth(a: Any) -> Any:
    t = _ops.as_tracer(a)
    return t if t.dtype == _BOOL else lax.ne(t, 0)


def _any(a: Any, *, axes: tuple[int, ...], keepdims: bool) -> Any:
    return lax.max(_truth(a), axes, keepdims)


def _all(a: Any, *, axes: tuple[int, ...], keepdims: bool) -> Any:
    return lax.min(_truth(a), axes, keepdims)


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return int(np.prod([shape[k] for k in axes], dtype=np.int64))


def _mean_impl(a: Any, *, axes: tuple[int, ...], dtype: Any, keepdims: bool) -> Any:
    t = _ops.as_tracer(a)
    d = np.dtype(t.dtype)
    out = dtype if dtype is not None else (d if _ops.is_float(d) else _F32)
    work = _F32 if (_is_half(out) or not _ops.is_float(out)) else out
    if _ops.is_float(out) and out.itemsize > work.itemsize:
        work = out
    s = lax.sum(lax.astype(t, work), axes, keepdims)
    n = _count(tuple(t.shape), axes)
    return lax.astype(lax.true_divide(s, float(n)), out)


def _var_impl(
    a: Any, *, axes: tuple[int, ...], dtype: Any, ddof: int, keepdims: bool, sqrt: bool
) -> Any:
    t = _ops.as_tracer(a)
    d = np.dtype(t.dtype)
    out = dtype if dtype is not None else (d if _ops.is_float(d) else _F32)
    work = out if (_ops.is_float(out) and not _is_half(out)) else _F32
    w = lax.astype(t, work)
    n = _count(tuple(t.shape), axes)
    mean = lax.true_divide(lax.sum(w, axes, True), float(n))
    dev = lax.sub(w, mean)
    v = lax.true_divide(
        lax.sum(lax.mul(dev, dev), axes, keepdims), float(builtins.max(n - ddof, 0))
    )
    if sqrt:
        v = lax.sqrt(v)
    return lax.astype(v, out)


def _arg_impl(a: Any, *, axis: int | None, keepdims: bool, largest: bool) -> Any:
    t = _ops.as_tracer(a)
    if axis is None:
        shape = tuple(t.shape)
        t = lax.reshape(t, (-1,))
        ax = 0
    else:
        ax = axis
    m = (lax.max if largest else lax.min)(t, (ax,), True)
    hit = lax.eq(t, m)
    if _ops.is_float(np.dtype(t.dtype)):
        hit = lax.bitwise_or(hit, lax.ne(t, t))  # numpy: the first NaN wins
    n = t.shape[ax]
    idx = lax.iota(np.int32, tuple(t.shape), ax)
    r = lax.min(lax.select(hit, idx, n), (ax,), keepdims)
    if axis is None and keepdims:
        r = lax.reshape(r, (1,) * len(shape))
    return r


# ---- public functions ----


def sum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: None = None,
    where: None = None,
) -> Any:
    """Sum over ``axis`` (None: all; an int or a tuple)."""
    _unsupported("sum", out, initial, where)
    _, axes = _axes(a, axis)
    st = (("axes", axes), ("dtype", _dtype_arg(dtype)), ("keepdims", bool(keepdims)))
    return _ops.apply(_sum, (a,), st)


def prod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: None = None,
    where: None = None,
) -> Any:
    """Product over ``axis``."""
    _unsupported("prod", out, initial, where)
    _, axes = _axes(a, axis)
    st = (("axes", axes), ("dtype", _dtype_arg(dtype)), ("keepdims", bool(keepdims)))
    return _ops.apply(_prod, (a,), st)


def _nonempty(name: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    if builtins.any(shape[k] == 0 for k in axes):
        raise ValueError(
            f"zero-size array to reduction operation {name} which has no identity"
        )


def max(
    a: Any,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: None = None,
    where: None = None,
) -> Any:
    """Maximum over ``axis`` (propagates NaN)."""
    _unsupported("max", out, initial, where)
    shape, axes = _axes(a, axis)
    _nonempty("maximum", shape, axes)
    return _ops.apply(_max, (a,), (("axes", axes), ("keepdims", bool(keepdims))))


def min(
    a: Any,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: None = None,
    where: None = None,
) -> Any:
    """Minimum over ``axis`` (propagates NaN)."""
    _unsupported("min", out, initial, where)
    shape, axes = _axes(a, axis)
    _nonempty("minimum", shape, axes)
    return _ops.apply(_min, (a,), (("axes", axes), ("keepdims", bool(keepdims))))


amax = max
amin = min


def any(
    a: Any,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: None = None,
) -> Any:
    """Whether any element over ``axis`` is nonzero (bool)."""
    _unsupported("any", out, None, where)
    _, axes = _axes(a, axis)
    return _ops.apply(_any, (a,), (("axes", axes), ("keepdims", bool(keepdims))))


def all(
    a: Any,
    axis: Any = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: None = None,
) -> Any:
    """Whether every element over ``axis`` is nonzero (bool)."""
    _unsupported("all", out, None, where)
    _, axes = _axes(a, axis)
    return _ops.apply(_all, (a,), (("axes", axes), ("keepdims", bool(keepdims))))


def mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    *,
    where: None = None,
) -> Any:
    """Arithmetic mean over ``axis`` (integers give float32)."""
    _unsupported("mean", out, None, where)
    _, axes = _axes(a, axis)
    st = (("axes", axes), ("dtype", _dtype_arg(dtype)), ("keepdims", bool(keepdims)))
    return _ops.apply(_mean_impl, (a,), st)


def _var_like(
    name: str,
    a: Any,
    axis: Any,
    dtype: Any,
    out: Any,
    ddof: int,
    keepdims: bool,
    where: Any,
    sqrt: bool,
) -> Any:
    _unsupported(name, out, None, where)
    _, axes = _axes(a, axis)
    st = (
        ("axes", axes),
        ("dtype", _dtype_arg(dtype)),
        ("ddof", int(ddof)),
        ("keepdims", bool(keepdims)),
        ("sqrt", sqrt),
    )
    return _ops.apply(_var_impl, (a,), st)


def var(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: None = None,
) -> Any:
    """Variance over ``axis`` (divided by n - ddof)."""
    return _var_like("var", a, axis, dtype, out, ddof, keepdims, where, False)


def std(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: None = None,
) -> Any:
    """Standard deviation over ``axis`` (sqrt of var)."""
    return _var_like("std", a, axis, dtype, out, ddof, keepdims, where, True)


def _arg(name: str, a: Any, axis: Any, out: Any, keepdims: bool, largest: bool) -> Any:
    _unsupported(name, out)
    shape = _ops.shape_of(a)
    ax = None if axis is None else _ops.normalize_axis(axis, len(shape))
    if (ax is None and 0 in shape) or (ax is not None and shape[ax] == 0):
        raise ValueError(f"attempt to get {name} of an empty sequence")
    st = (("axis", ax), ("keepdims", bool(keepdims)), ("largest", largest))
    return _ops.apply(_arg_impl, (a,), st)


def argmax(
    a: Any, axis: Any = None, out: None = None, *, keepdims: bool = False
) -> Any:
    """Index of the first maximum over ``axis`` (None: of the flattened
    array); int32."""
    return _arg("argmax", a, axis, out, keepdims, True)


def argmin(
    a: Any, axis: Any = None, out: None = None, *, keepdims: bool = False
) -> Any:
    """Index of the first minimum over ``axis``; int32."""
    return _arg("argmin", a, axis, out, keepdims, False)
