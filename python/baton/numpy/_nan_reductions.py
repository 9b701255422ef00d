"""NaN-ignoring reductions (nansum, nanprod, nanmax, nanmin, nanmean,
nanvar, nanstd, nanargmax, nanargmin) and average, ptp, count_nonzero.

Result dtypes follow jax.numpy (as the plain reductions of
``_reductions``). Where numpy warns or raises on all-NaN slices, these
follow JAX: nanmax/nanmin give NaN, nanmean/nanvar NaN, nanargmax/nanargmin
-1 (numpy raises ValueError).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.numpy import _operands as _c
from baton.numpy import _reductions as _red
from baton.numpy._reduction_signatures import define


def _is_float_t(t: Any) -> bool:
    return _ops.is_float(np.dtype(t.dtype))


def _zero_nans(t: Any, fill: Any) -> Any:
    if not _is_float_t(t):
        return t
    return lax.select(lax.ne(t, t), lax.full((), fill, t.dtype), t)


# ---- implementations ----


def _nansum_impl(a: Any, *, axes: tuple[int, ...], dtype: Any, keepdims: bool) -> Any:
    t = _zero_nans(_ops.as_tracer(a), 0)
    if dtype is None:
        return lax.sum(t, axes, keepdims)
    # lax.sum widens small integers: the requested dtype is applied again.
    return lax.astype(lax.sum(lax.astype(t, dtype), axes, keepdims), dtype)


def _nanprod_impl(a: Any, *, axes: tuple[int, ...], dtype: Any, keepdims: bool) -> Any:
    t = _zero_nans(_ops.as_tracer(a), 1)
    if dtype is None:
        return lax.prod(t, axes, keepdims)
    # lax.prod widens small integers: the requested dtype is applied again.
    return lax.astype(lax.prod(lax.astype(t, dtype), axes, keepdims), dtype)


def _nanext_impl(
    a: Any, *, axes: tuple[int, ...], keepdims: bool, largest: bool
) -> Any:
    t = _ops.as_tracer(a)
    red = lax.max if largest else lax.min
    if not _is_float_t(t):
        return red(t, axes, keepdims)
    fill = float("-inf") if largest else float("inf")
    r = red(_zero_nans(t, fill), axes, keepdims)
    all_nan = lax.min(lax.ne(t, t), axes, keepdims)
    return lax.select(all_nan, lax.full((), float("nan"), t.dtype), r)


def _count_valid(t: Any, axes: tuple[int, ...], keepdims: bool, w: np.dtype) -> Any:
    return lax.sum(lax.astype(lax.eq(t, t), w), axes, keepdims)


def _out_dtype(d: np.dtype, dtype: Any) -> tuple[np.dtype, np.dtype]:
    out = dtype if dtype is not None else (d if _ops.is_float(d) else _c.F32)
    work = out if (_ops.is_float(out) and not _c.is_half(out)) else _c.F32
    return out, work


def _nanmean_impl(a: Any, *, axes: tuple[int, ...], dtype: Any, keepdims: bool) -> Any:
    t = _ops.as_tracer(a)
    out, work = _out_dtype(np.dtype(t.dtype), dtype)
    w = lax.astype(t, work)
    s = lax.sum(_zero_nans(w, 0), axes, keepdims)
    n = _count_valid(w, axes, keepdims, work)
    return lax.astype(lax.true_divide(s, n), out)


def _nanvar_impl(
    a: Any, *, axes: tuple[int, ...], dtype: Any, ddof: int, keepdims: bool, sqrt: bool
) -> Any:
    t = _ops.as_tracer(a)
    out, work = _out_dtype(np.dtype(t.dtype), dtype)
    w = lax.astype(t, work)
    valid = lax.eq(w, w)
    n = lax.sum(lax.astype(valid, work), axes, True)
    mean = lax.true_divide(lax.sum(_zero_nans(w, 0), axes, True), n)
    dev = lax.select(valid, lax.sub(w, mean), lax.full((), 0, work))
    ss = lax.sum(lax.mul(dev, dev), axes, keepdims)
    dof = lax.sub(n if keepdims else lax.reshape(n, tuple(ss.shape)), float(ddof))
    v = lax.select(
        lax.gt(dof, 0),
        lax.true_divide(ss, lax.maximum(dof, 1.0)),
        lax.full((), float("nan"), work),
    )
    if sqrt:
        v = lax.sqrt(v)
    return lax.astype(v, out)


def _nanarg_impl(a: Any, *, axis: int | None, keepdims: bool, largest: bool) -> Any:
    t = _ops.as_tracer(a)
    if not _is_float_t(t):
        return _red._arg_impl(t, axis=axis, keepdims=keepdims, largest=largest)
    nan = lax.ne(t, t)
    fill = float("-inf") if largest else float("inf")
    r = _red._arg_impl(
        _zero_nans(t, fill), axis=axis, keepdims=keepdims, largest=largest
    )
    axes = tuple(range(len(t.shape))) if axis is None else (axis,)
    all_nan = lax.min(nan, axes, keepdims)
    if axis is None and keepdims:
        all_nan = lax.reshape(all_nan, tuple(r.shape))
    return lax.select(all_nan, lax.full((), -1, r.dtype), r)


def _ptp_impl(a: Any, *, axes: tuple[int, ...], keepdims: bool) -> Any:
    t = _ops.as_tracer(a)
    return lax.sub(lax.max(t, axes, keepdims), lax.min(t, axes, keepdims))


def _count_nonzero_impl(a: Any, *, axes: tuple[int, ...], keepdims: bool) -> Any:
    t = _ops.as_tracer(a)
    nz = t if t.dtype == _c.BOOL else lax.ne(t, 0)
    return lax.sum(lax.astype(nz, np.int32), axes, keepdims)


def _average_impl(
    a: Any,
    w: Any,
    *,
    axes: tuple[int, ...],
    bshape: tuple[int, ...] | None,
    keepdims: bool,
    returned: bool,
) -> Any:
    d = _c.inexact_dtype(a, w)
    work = _c.work_dtype(d)
    x = lax.astype(_ops.as_tracer(a), work)
    wt = lax.astype(_ops.as_tracer(w), work)
    if bshape is not None:
        wt = lax.reshape(wt, bshape)
    wt = lax.broadcast_to(wt, tuple(x.shape))
    scl = lax.sum(wt, axes, keepdims)
    avg = lax.true_divide(lax.sum(lax.mul(x, wt), axes, keepdims), scl)
    if returned:
        return lax.astype(avg, d), lax.astype(scl, d)
    return lax.astype(avg, d)


# ---- public functions ----


def _nanext(name: str, largest: bool) -> Any:
    """nanmax's and nanmin's body (the "max" shape)."""

    def body(
        a: Any, axis: Any, out: Any, keepdims: bool, initial: Any, where: Any
    ) -> Any:
        _red._unsupported(name, out, initial, where)
        shape, axes = _red._axes(a, axis)
        _red._nonempty("fmax" if largest else "fmin", shape, axes)
        st = (("axes", axes), ("keepdims", bool(keepdims)), ("largest", largest))
        return _ops.apply(_nanext_impl, (a,), st)

    return body


# (name, signature shape, body, docstring)
REDUCTIONS = [
    (
        "nansum",
        "sum",
        _red._with_dtype("nansum", _nansum_impl),
        """Sum over ``axis`` treating NaN as 0 (dtypes as :func:`sum`).

    >>> bnp.nansum(bnp.array([1.0, bnp.nan, 2.0]))   # 3.0
    """,
    ),
    (
        "nanprod",
        "sum",
        _red._with_dtype("nanprod", _nanprod_impl),
        """Product over ``axis`` treating NaN as 1.

    >>> bnp.nanprod(bnp.array([2.0, bnp.nan, 3.0]))   # 6.0
    """,
    ),
    (
        "nanmax",
        "max",
        _nanext("nanmax", True),
        """Maximum over ``axis`` ignoring NaN (NaN where a slice is all NaN).

    >>> bnp.nanmax(bnp.array([1.0, bnp.nan, 3.0]))   # 3.0
    """,
    ),
    (
        "nanmin",
        "max",
        _nanext("nanmin", False),
        """Minimum over ``axis`` ignoring NaN (NaN where a slice is all NaN).

    >>> bnp.nanmin(bnp.array([1.0, bnp.nan, 3.0]))   # 1.0
    """,
    ),
    (
        "nanmean",
        "mean",
        _red._mean_like("nanmean", _nanmean_impl),
        """Mean over ``axis`` of the non-NaN elements (NaN for all-NaN slices;
    integers give float32).

    >>> bnp.nanmean(bnp.array([1.0, bnp.nan, 3.0]))   # 2.0
    """,
    ),
    (
        "nanvar",
        "var",
        _red._var_like("nanvar", False, _nanvar_impl),
        """Variance over ``axis`` of the non-NaN elements, divided by
    count - ddof (NaN where that is <= 0).

    >>> bnp.nanvar(bnp.array([1.0, bnp.nan, 3.0]))   # 1.0
    """,
    ),
    (
        "nanstd",
        "var",
        _red._var_like("nanstd", True, _nanvar_impl),
        """Standard deviation over ``axis`` of the non-NaN elements.

    >>> bnp.nanstd(bnp.array([1.0, bnp.nan, 3.0]))   # 1.0
    """,
    ),
    (
        "nanargmax",
        "nanargmax",
        _red._arg("nanargmax", True, _nanarg_impl),
        """Index of the first maximum ignoring NaN (int32); -1 for an all-NaN
    slice, as in JAX (numpy raises).

    >>> bnp.nanargmax(bnp.array([bnp.nan, 3.0, 1.0]))   # 1
    """,
    ),
    (
        "nanargmin",
        "nanargmax",
        _red._arg("nanargmin", False, _nanarg_impl),
        """Index of the first minimum ignoring NaN (int32); -1 for an all-NaN
    slice.

    >>> bnp.nanargmin(bnp.array([bnp.nan, 3.0, 1.0]))   # 2
    """,
    ),
]
define(globals(), REDUCTIONS)


def ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Range (max - min) over ``axis``, in a's dtype (bool is refused).

    >>> bnp.ptp(bnp.array([[1, 5], [2, 9]]), axis=1)   # [4, 7]
    """
    _red._unsupported("ptp", out)
    if _ops.result_dtype(a) == _c.BOOL:
        raise TypeError("ptp: not defined for bool arrays; convert to int first")
    shape, axes = _red._axes(a, axis)
    _red._nonempty("maximum", shape, axes)
    return _ops.apply(_ptp_impl, (a,), (("axes", axes), ("keepdims", bool(keepdims))))


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Number of nonzero elements over ``axis`` (int32).

    >>> bnp.count_nonzero(bnp.array([[0, 1], [2, 3]]), axis=0)   # [1, 2]
    """
    _, axes = _red._axes(a, axis)
    return _ops.apply(
        _count_nonzero_impl, (a,), (("axes", axes), ("keepdims", bool(keepdims)))
    )


def average(
    a: Any,
    axis: Any = None,
    weights: Any = None,
    returned: bool = False,
    keepdims: bool = False,
) -> Any:
    """Weighted mean over ``axis``: sum(a * w) / sum(w); ``weights`` has a's
    shape, or is 1-D along a single ``axis``. With ``returned``, also the
    sum of the weights. Integers give float32; zero total weight gives
    NaN/inf (JAX; numpy raises ZeroDivisionError).

    >>> bnp.average(bnp.array([1.0, 2.0, 4.0]), weights=[1, 1, 2])   # 2.75
    """
    shape, axes = _red._axes(a, axis)
    if weights is None:
        mean = _red.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return mean
        n = _red._count(shape, axes)
        from baton.numpy import _creation

        return mean, _creation.full(mean.shape, float(n), mean.dtype)
    wshape = _ops.shape_of(weights)
    bshape = None
    if wshape != shape:
        if axis is None:
            raise TypeError(
                "average: axis must be given when the shapes of a and weights "
                f"differ ({shape} and {wshape})"
            )
        if len(axes) != 1 or len(wshape) != 1:
            raise TypeError(
                "average: weights must have a's shape or be 1-D along a single "
                f"axis; got weights of shape {wshape} for a of shape {shape}"
            )
        if wshape[0] != shape[axes[0]]:
            raise ValueError(
                f"average: length of weights ({wshape[0]}) is not compatible with "
                f"axis {axes[0]} of a (length {shape[axes[0]]})"
            )
        bshape = tuple(shape[k] if k == axes[0] else 1 for k in range(len(shape)))
    st = (
        ("axes", axes),
        ("bshape", bshape),
        ("keepdims", bool(keepdims)),
        ("returned", bool(returned)),
    )
    return _ops.apply(_average_impl, (a, weights), st)


__all__ = sorted(
    [*(name for name, *_ in REDUCTIONS), "average", "count_nonzero", "ptp"]
)
