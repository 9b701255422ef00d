"""Sorting of ``baton.numpy``: sort, argsort, partition, argpartition,
lexsort, and the order statistics built on sorting: median, percentile,
quantile and their NaN-ignoring variants.

Everything is built on the IR's sort op (``lax.sort`` / ``lax.argsort``):
a stable sort in jax.numpy's order (NaNs last, -0.0 equal to 0.0). Payloads
follow their keys through a gather by the sorting permutation, and lexsort
composes stable index sorts, last key first in priority. As in jax.numpy,
``partition`` and ``argpartition`` return fully determined results: the
``kth + 1`` smallest in ascending order, then the rest (values descending,
indices in their original order).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _dtypes, _ops
from baton._baton import lax

Tracer = lax.Tracer
_I32 = np.dtype(np.int32)
_F32 = np.dtype(np.float32)
_BOOL = np.dtype(np.bool_)
_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")

__all__ = [
    "argpartition",
    "argsort",
    "lexsort",
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "partition",
    "percentile",
    "quantile",
    "sort",
]


def _run(impl: Any, args: tuple[Any, ...], **static: Any) -> Any:
    return _ops.apply(impl, args, tuple(sorted(static.items())))


def _flat_indices(shape: tuple[int, ...], idx: Any, axis: int) -> Any:
    """Row-major offsets of the elements that along-axis indices name."""
    strides = np.cumprod(((*shape[1:], 1))[::-1])[::-1]
    flat = lax.mul(lax.astype(idx, _I32), int(strides[axis]))
    for d, n in enumerate(shape):
        if d != axis and n != 1:
            flat = lax.add(flat, lax.mul(lax.iota(_I32, shape, d), int(strides[d])))
    return flat


def _take_along(x: Any, idx: Any, axis: int) -> Any:
    """x[..., idx[..., i, ...], ...] along axis; idx has x's shape."""
    shape = tuple(x.shape)
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return x
    return lax.take(lax.reshape(x, (n,)), _flat_indices(shape, idx, axis), 0)


def _reverse(x: Any, axis: int) -> Any:
    n = x.shape[axis]
    if n <= 1:
        return x
    return lax.take(x, lax.sub(n - 1, lax.iota(_I32, (n,), 0)), axis)


def _axis_arg(a: Any, axis: Any) -> tuple[Any, int]:
    """(a, axis) with axis None meaning the flattened array."""
    if axis is None:
        return lax.reshape(a, (-1,)), 0
    if a.ndim == 0:
        raise np.exceptions.AxisError(
            f"axis {axis} is out of bounds for an array of dimension 0"
        )
    return a, _ops.normalize_axis(axis, a.ndim)


# ---- sort, argsort, partition, lexsort ----


def _sort(a: Any, *, axis: Any, descending: bool) -> Any:
    t, ax = _axis_arg(_ops.as_tracer(a), axis)
    return lax.sort(t, ax, descending)


def _argsort(a: Any, *, axis: Any, descending: bool) -> Any:
    t, ax = _axis_arg(_ops.as_tracer(a), axis)
    return lax.argsort(t, ax, descending)


def _check_sort_args(name: str, kind: Any, order: Any) -> None:
    if order is not None:
        raise TypeError(f"{name}: order= is not supported (no structured arrays)")
    del kind  # every sort is the same stable sort


def sort(
    a: Any,
    axis: int | None = -1,
    *,
    kind: Any = None,
    order: Any = None,
    stable: bool = True,
    descending: bool = False,
) -> Any:
    """a sorted along ``axis`` (None: the flattened array), stably; NaNs
    last (first when ``descending``)."""
    _check_sort_args("sort", kind, order)
    return _run(_sort, (a,), axis=axis, descending=bool(descending))


def argsort(
    a: Any,
    axis: int | None = -1,
    *,
    kind: Any = None,
    order: Any = None,
    stable: bool = True,
    descending: bool = False,
) -> Any:
    """The int32 indices that sort a along ``axis`` (None: flattened); equal
    elements keep their order, also when ``descending``."""
    _check_sort_args("argsort", kind, order)
    return _run(_argsort, (a,), axis=axis, descending=bool(descending))


def _kth(name: str, kth: Any, n: int) -> int:
    try:
        k = operator.index(kth)
    except TypeError:
        raise TypeError(f"{name}: kth must be an int, got {kth!r}") from None
    if not -n <= k < n:
        raise ValueError(f"{name}: kth {k} is out of bounds for a length-{n} axis")
    return k + n if k < 0 else k


def _partition(a: Any, *, kth: int, axis: int) -> Any:
    t = _ops.as_tracer(a)
    s = lax.sort(t, axis, False)
    n = t.shape[axis]
    lo = [0] * t.ndim
    hi = list(t.shape)
    hi[axis] = kth + 1
    bottom = lax.slice(s, lo, hi)
    lo[axis], hi[axis] = kth + 1, n
    top = _reverse(lax.slice(s, lo, hi), axis)
    return lax.concatenate([bottom, top], axis)


def _argpartition(a: Any, *, kth: int, axis: int) -> Any:
    t = _ops.as_tracer(a)
    p = lax.argsort(t, axis, False)
    n = t.shape[axis]
    lo = [0] * t.ndim
    hi = list(t.shape)
    hi[axis] = kth + 1
    bottom = lax.slice(p, lo, hi)
    lo[axis], hi[axis] = kth + 1, n
    top = lax.sort(lax.slice(p, lo, hi), axis, False)
    return lax.concatenate([bottom, top], axis)


def _partition_args(name: str, a: Any, kth: Any, axis: Any) -> tuple[int, int]:
    shape = _ops.shape_of(a)
    if not shape:
        raise ValueError(f"{name}: needs an array of rank >= 1")
    ax = _ops.normalize_axis(axis, len(shape))
    return _kth(name, kth, shape[ax]), ax


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """jnp.partition: along ``axis``, the kth + 1 smallest elements in
    ascending order, then the others in descending order."""
    k, ax = _partition_args("partition", a, kth, axis)
    return _run(_partition, (a,), kth=k, axis=ax)


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """jnp.argpartition: the indices of the kth + 1 smallest (in sorted
    order), then the others' in increasing index order; int32."""
    k, ax = _partition_args("argpartition", a, kth, axis)
    return _run(_argpartition, (a,), kth=k, axis=ax)


def _lexsort(*keys: Any, axis: int) -> Any:
    ts = [_ops.as_tracer(k) for k in keys]
    shape = tuple(ts[0].shape)
    for t in ts:
        if tuple(t.shape) != shape:
            raise ValueError("lexsort: all keys need the same shape")
    perm = lax.argsort(ts[0], axis, False)
    for t in ts[1:]:
        perm = _take_along(perm, lax.argsort(_take_along(t, perm, axis), axis), axis)
    return perm


def lexsort(keys: Any, axis: int = -1) -> Any:
    """Indices sorting by several keys, the last key first (a stable sort by
    each key in turn); int32."""
    if isinstance(keys, (tuple, list)):
        ks = tuple(keys)
    else:
        shape = _ops.shape_of(keys)
        if not shape:
            raise TypeError("lexsort: keys must be a sequence or an array of rank >= 1")
        ks = tuple(keys[i] for i in range(shape[0]))
    if not ks:
        raise TypeError("lexsort: needs at least one key")
    shape = _ops.shape_of(ks[0])
    if not shape:
        raise ValueError("lexsort: keys must have rank >= 1")
    ax = _ops.normalize_axis(axis, len(shape))
    return _run(_lexsort, ks, axis=ax)


# ---- quantiles ----


def _inexact(d: np.dtype) -> np.dtype:
    if _ops.is_float(d):
        return d
    return np.dtype(np.float64) if _dtypes.x64_enabled() else _F32


def _quantile(
    a: Any, q: Any, *, axes: Any, method: str, keepdims: bool, nan: bool, scale: float
) -> Any:
    t = _ops.as_tracer(a)
    dt = _inexact(np.dtype(t.dtype))
    t = lax.astype(t, dt)
    qt = _ops.as_tracer(q, dt)
    if scale != 1.0:
        qt = lax.true_divide(qt, scale)
    qt = lax.astype(qt, dt)
    shape = tuple(t.shape)
    nd = len(shape)
    red = tuple(range(nd)) if axes is None else axes
    kept = tuple(d for d in range(nd) if d not in red)
    kept_shape = tuple(shape[d] for d in kept)
    n = int(np.prod([shape[d] for d in red], dtype=np.int64))
    t = lax.reshape(lax.transpose(t, kept + red), (*kept_shape, n))
    rows = int(np.prod(kept_shape, dtype=np.int64))
    s = lax.sort(t, len(kept_shape), False)  # NaNs last
    qshape = tuple(qt.shape)
    out_shape = qshape + kept_shape
    qb = lax.broadcast_in_dim(qt, out_shape, tuple(range(len(qshape))))
    if nan:
        valid = lax.sum(lax.astype(lax.eq(t, t), _I32), (len(kept_shape),))
        count = lax.broadcast_in_dim(
            valid, out_shape, tuple(range(len(qshape), len(out_shape)))
        )
        count_f = lax.astype(count, dt)
    else:
        count = lax.full(out_shape, n, _I32)
        count_f = lax.full(out_shape, float(n), dt)
    if n == 0 or rows == 0:
        res = lax.full(out_shape, float("nan"), dt)
    else:
        pos = lax.mul(qb, lax.sub(count_f, 1.0))
        last = lax.maximum(lax.sub(count, 1), 0)
        low = lax.minimum(lax.maximum(lax.astype(lax.floor(pos), _I32), 0), last)
        high = lax.minimum(lax.maximum(lax.astype(lax.ceil(pos), _I32), 0), last)
        hw = lax.sub(pos, lax.astype(low, dt))
        flat = lax.reshape(s, (rows * n,))
        base = lax.mul(
            lax.reshape(lax.iota(_I32, (rows,), 0), kept_shape)
            if kept_shape
            else lax.full((), 0, _I32),
            n,
        )
        base = lax.broadcast_in_dim(
            base, out_shape, tuple(range(len(qshape), len(out_shape)))
        )
        lo_v = lax.take(flat, lax.add(base, low), 0)
        hi_v = lax.take(flat, lax.add(base, high), 0)
        if method == "linear":
            res = lax.add(lax.mul(lo_v, lax.sub(1.0, hw)), lax.mul(hi_v, hw))
        elif method == "lower":
            res = lo_v
        elif method == "higher":
            res = hi_v
        elif method == "nearest":
            res = lax.select(lax.le(hw, 0.5), lo_v, hi_v)
        else:  # midpoint
            res = lax.mul(lax.add(lo_v, hi_v), 0.5)
        if nan:
            res = lax.select(
                lax.eq(count, 0), lax.full(out_shape, float("nan"), dt), res
            )
        else:
            # Any NaN in a slice sorts to its end and makes the result NaN.
            end = lax.take(flat, lax.add(base, n - 1), 0)
            res = lax.select(lax.ne(end, end), end, res)
    if keepdims:
        full_shape = qshape + tuple(1 if d in red else shape[d] for d in range(nd))
        res = lax.reshape(res, full_shape)
    return res


def _quantile_entry(
    name: str,
    a: Any,
    q: Any,
    axis: Any,
    method: str,
    keepdims: bool,
    nan: bool,
    scale: float,
    out: Any = None,
    overwrite_input: bool = False,
) -> Any:
    if out is not None:
        raise NotImplementedError(
            f"{name}: out= is not supported (arrays are immutable)"
        )
    del overwrite_input  # arrays are immutable: nothing to overwrite
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    shape = _ops.shape_of(a)
    axes = _ops.normalize_axes(axis, len(shape))
    return _run(
        _quantile,
        (a, q),
        axes=axes,
        method=method,
        keepdims=bool(keepdims),
        nan=nan,
        scale=float(scale),
    )


def quantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> Any:
    """The q-th quantiles (q in [0, 1], a scalar or array) of a over ``axis``;
    NaN where a slice has a NaN. Methods: linear, lower, higher, nearest,
    midpoint."""
    return _quantile_entry(
        "quantile", a, q, axis, method, keepdims, False, 1.0, out, overwrite_input
    )


def nanquantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> Any:
    """quantile ignoring NaNs (NaN only where a slice is all NaN)."""
    return _quantile_entry(
        "nanquantile", a, q, axis, method, keepdims, True, 1.0, out, overwrite_input
    )


def percentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> Any:
    """quantile with q in percent ([0, 100])."""
    return _quantile_entry(
        "percentile", a, q, axis, method, keepdims, False, 100.0, out, overwrite_input
    )


def nanpercentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> Any:
    """nanquantile with q in percent ([0, 100])."""
    return _quantile_entry(
        "nanpercentile", a, q, axis, method, keepdims, True, 100.0, out, overwrite_input
    )


def median(
    a: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    """The median over ``axis`` (the midpoint of the middle two for even
    counts); NaN where a slice has a NaN."""
    return _quantile_entry(
        "median", a, 0.5, axis, "midpoint", keepdims, False, 1.0, out, overwrite_input
    )


def nanmedian(
    a: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    """median ignoring NaNs (NaN only where a slice is all NaN)."""
    return _quantile_entry(
        "nanmedian", a, 0.5, axis, "midpoint", keepdims, True, 1.0, out, overwrite_input
    )
