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
from baton.numpy._reduction_signatures import define

_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)


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
    out = dtype if dtype is not None else (d if _ops.is_inexact(d) else _F32)
    work = _F32 if (_is_half(out) or not _ops.is_inexact(out)) else out
    if _ops.is_inexact(out) and out.itemsize > work.itemsize:
        work = out
    s = lax.sum(lax.astype(t, work), axes, keepdims)
    n = _count(tuple(t.shape), axes)
    return lax.astype(lax.true_divide(s, float(n)), out)


def _var_impl(
    a: Any, *, axes: tuple[int, ...], dtype: Any, ddof: int, keepdims: bool, sqrt: bool
) -> Any:
    t = _ops.as_tracer(a)
    d = np.dtype(t.dtype)
    # Complex data: the variance of |x - mean| (real, as numpy and JAX).
    out = dtype if dtype is not None else (_ops.real_of(d) if _ops.is_inexact(d) else _F32)
    if _ops.is_complex(d):
        work = _ops.complex_of(out)
    else:
        work = out if (_ops.is_float(out) and not _is_half(out)) else _F32
    w = lax.astype(t, work)
    n = _count(tuple(t.shape), axes)
    mean = lax.true_divide(lax.sum(w, axes, True), float(n))
    dev = lax.sub(w, mean)
    sq = lax.mul(dev, dev)
    if _ops.is_complex(work):
        sq = lax.add(lax.mul(lax.real(dev), lax.real(dev)), lax.mul(lax.imag(dev), lax.imag(dev)))
    v = lax.true_divide(lax.sum(sq, axes, keepdims), float(builtins.max(n - ddof, 0)))
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


# ---- public functions: a table of bodies ----
# Each body takes its signature shape's arguments in order
# (``_reduction_signatures``) and runs one implementation above.


def _nonempty(name: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    if builtins.any(shape[k] == 0 for k in axes):
        raise ValueError(
            f"zero-size array to reduction operation {name} which has no identity"
        )


def _with_dtype_static(axes: tuple[int, ...], dtype: Any, keepdims: bool) -> tuple:
    return (("axes", axes), ("dtype", _dtype_arg(dtype)), ("keepdims", bool(keepdims)))


def _with_dtype(name: str, impl: Any) -> Any:
    """sum's and prod's (and nansum's and nanprod's) body (the "sum" shape)."""

    def body(
        a: Any,
        axis: Any,
        dtype: Any,
        out: Any,
        keepdims: bool,
        initial: Any,
        where: Any,
    ) -> Any:
        _unsupported(name, out, initial, where)
        _, axes = _axes(a, axis)
        return _ops.apply(impl, (a,), _with_dtype_static(axes, dtype, keepdims))

    return body


def _extremum(name: str, what: str, impl: Any) -> Any:
    """max's and min's body (the "max" shape); ``what`` names the operation in
    the error for an empty reduction."""

    def body(
        a: Any, axis: Any, out: Any, keepdims: bool, initial: Any, where: Any
    ) -> Any:
        _unsupported(name, out, initial, where)
        shape, axes = _axes(a, axis)
        _nonempty(what, shape, axes)
        return _ops.apply(impl, (a,), (("axes", axes), ("keepdims", bool(keepdims))))

    return body


def _logical(name: str, impl: Any) -> Any:
    """any's and all's body (the "any" shape)."""

    def body(a: Any, axis: Any, out: Any, keepdims: bool, where: Any) -> Any:
        _unsupported(name, out, None, where)
        _, axes = _axes(a, axis)
        return _ops.apply(impl, (a,), (("axes", axes), ("keepdims", bool(keepdims))))

    return body


def _mean_like(name: str, impl: Any) -> Any:
    """mean's (and nanmean's) body (the "mean" shape)."""

    def body(
        a: Any, axis: Any, dtype: Any, out: Any, keepdims: bool, where: Any
    ) -> Any:
        _unsupported(name, out, None, where)
        _, axes = _axes(a, axis)
        return _ops.apply(impl, (a,), _with_dtype_static(axes, dtype, keepdims))

    return body


def _var_like(name: str, sqrt: bool, impl: Any = _var_impl) -> Any:
    """var's and std's body (the "var" shape; nanvar's and nanstd's too, with
    their ``impl``)."""

    def body(
        a: Any, axis: Any, dtype: Any, out: Any, ddof: int, keepdims: bool, where: Any
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
        return _ops.apply(impl, (a,), st)

    return body


def _arg(name: str, largest: bool, impl: Any = _arg_impl) -> Any:
    """argmax's and argmin's body (the "argmax" shape; nanargmax's too, with
    its ``impl``)."""

    def body(a: Any, axis: Any, out: Any, keepdims: bool) -> Any:
        _unsupported(name, out)
        shape = _ops.shape_of(a)
        ax = None if axis is None else _ops.normalize_axis(axis, len(shape))
        if (ax is None and 0 in shape) or (ax is not None and shape[ax] == 0):
            raise ValueError(f"attempt to get {name} of an empty sequence")
        st = (("axis", ax), ("keepdims", bool(keepdims)), ("largest", largest))
        return _ops.apply(impl, (a,), st)

    return body


# (name, signature shape, body, docstring)
REDUCTIONS = [
    (
        "sum",
        "sum",
        _with_dtype("sum", _sum),
        "Sum over ``axis`` (None: all; an int or a tuple).",
    ),
    ("prod", "sum", _with_dtype("prod", _prod), "Product over ``axis``."),
    (
        "max",
        "max",
        _extremum("max", "maximum", _max),
        "Maximum over ``axis`` (propagates NaN).",
    ),
    (
        "min",
        "max",
        _extremum("min", "minimum", _min),
        "Minimum over ``axis`` (propagates NaN).",
    ),
    (
        "any",
        "any",
        _logical("any", _any),
        "Whether any element over ``axis`` is nonzero (bool).",
    ),
    (
        "all",
        "any",
        _logical("all", _all),
        "Whether every element over ``axis`` is nonzero (bool).",
    ),
    (
        "mean",
        "mean",
        _mean_like("mean", _mean_impl),
        "Arithmetic mean over ``axis`` (integers give float32).",
    ),
    (
        "var",
        "var",
        _var_like("var", False),
        "Variance over ``axis`` (divided by n - ddof).",
    ),
    (
        "std",
        "var",
        _var_like("std", True),
        "Standard deviation over ``axis`` (sqrt of var).",
    ),
    (
        "argmax",
        "argmax",
        _arg("argmax", True),
        "Index of the first maximum over ``axis`` (None: of the flattened\n"
        "    array); int32.",
    ),
    (
        "argmin",
        "argmax",
        _arg("argmin", False),
        "Index of the first minimum over ``axis``; int32.",
    ),
]
define(globals(), REDUCTIONS)

# The table's max and min (this module's globals shadow the builtins).
amax = globals()["max"]
amin = globals()["min"]

__all__ = sorted([*(name for name, *_ in REDUCTIONS), "amax", "amin"])
