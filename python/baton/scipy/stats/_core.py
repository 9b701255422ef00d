"""``jax.scipy.stats``' functions of samples: ``mode``, ``rankdata``,
``sem``."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from baton import _ops
from baton.scipy.stats._functions import bnp, inexact

_NAN_POLICIES = ("propagate", "omit", "raise")


class ModeResult(NamedTuple):
    """``mode``'s result: the most common value and how often it occurs."""

    mode: Any
    count: Any


def _check_nan_policy(fn: str, nan_policy: str) -> None:
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(
            f"Illegal nan_policy value {nan_policy!r}; expected one of "
            "{'propagate', 'omit', 'raise'}"
        )
    if nan_policy == "omit":
        raise NotImplementedError(
            f"Logic for `nan_policy` of {nan_policy} is not implemented"
        )
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{fn}`, we cannot know whether `x` "
            "contains nans. Please check if nans exist in `x` outside of the "
            f"`{fn}` function."
        )


def _axis(axis: Any, ndim: int) -> int:
    a = int(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
    return a % ndim


def _runs(s: Any) -> tuple[Any, Any, Any]:
    """For ``s`` sorted along its last axis (NaNs last, all equal): where
    each element's run of equal values starts and ends (exclusive), and
    the number of runs up to it."""
    n = bnp()
    from baton import lax

    size = s.shape[-1]
    same = (s[..., 1:] == s[..., :-1]) | (n.isnan(s[..., 1:]) & n.isnan(s[..., :-1]))
    lead = n.ones((*s.shape[:-1], 1), bool)
    new = n.concatenate([lead, ~same], axis=-1)
    last = n.concatenate([~same, lead], axis=-1)
    idx = n.broadcast_to(n.arange(size, dtype=np.int32), s.shape)
    start = lax.cummax(n.where(new, idx, 0), axis=len(s.shape) - 1)
    end = lax.cummin(n.where(last, idx + 1, size), axis=len(s.shape) - 1, reverse=True)
    dense = n.cumsum(new.astype(np.int32), axis=-1)
    return start, end, dense


def _mode(x: Any, *, axis: Any, keepdims: bool) -> Any:
    n = bnp()
    x = n.atleast_1d(x)
    shape = tuple(x.shape)
    if axis is None:
        out_shape = (1,) * len(shape) if keepdims else ()
        x = n.ravel(x)
        ax = 0
    else:
        ax = _axis(axis, len(shape))
        out_shape = (
            tuple(1 if i == ax else d for i, d in enumerate(shape))
            if keepdims
            else tuple(d for i, d in enumerate(shape) if i != ax)
        )
    x = n.moveaxis(x, ax, -1)
    if x.shape[-1] == 0:
        f = n.zeros(out_shape, np.float32)
        return ModeResult(f + np.nan, f)
    s = n.sort(x, axis=-1)
    start, end, _ = _runs(s)
    counts = end - start
    # The first longest run: the smallest of the most common values.
    best = n.argmax(counts, axis=-1)[..., None]
    vals = n.take_along_axis(s, best, axis=-1)[..., 0]
    cnt = n.take_along_axis(counts, best, axis=-1)[..., 0]
    return ModeResult(n.reshape(vals, out_shape), n.reshape(cnt, out_shape))


def mode(
    a: Any, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False
) -> ModeResult:
    """The most common value along ``axis`` (all of ``a`` for None) and
    its count, as ``ModeResult(mode, count)``; ties go to the smallest
    value, NaNs count as one value (as JAX). Only
    ``nan_policy='propagate'``, as in JAX."""
    _check_nan_policy("mode", nan_policy)
    static = (
        ("axis", None if axis is None else int(axis)),
        ("keepdims", bool(keepdims)),
    )
    return ModeResult(*_ops.apply(_mode, (a,), static))


def _rankdata(a: Any, *, method: str, axis: Any) -> Any:
    n = bnp()
    a = _ops.as_tracer(a)
    if axis is None:
        a = n.ravel(a)
        ax = 0
    else:
        ax = _axis(axis, len(a.shape))
    x = n.moveaxis(a, ax, -1)
    order = n.argsort(x, axis=-1, stable=True)
    s = n.take_along_axis(x, order, axis=-1)
    size = x.shape[-1]
    pos = n.broadcast_to(n.arange(size, dtype=np.int32), x.shape)
    start, end, dense = _runs(s)
    f = np.float32
    if method == "ordinal":
        r = (pos + 1).astype(f)
    elif method == "dense":
        r = dense.astype(f)
    elif method == "min":
        r = (start + 1).astype(f)
    elif method == "max":
        r = end.astype(f)
    else:
        r = 0.5 * (start.astype(f) + 1.0 + end.astype(f))
    # Back from sorted order: rank[order[i]] = r[i].
    inv = n.argsort(order, axis=-1)
    out = n.take_along_axis(r, inv, axis=-1)
    nan = (
        n.any(n.isnan(x), axis=-1, keepdims=True)
        if np.issubdtype(np.dtype(x.dtype), np.floating)
        else None
    )
    if nan is not None:
        # As JAX: any NaN along the ranked axis (all of a for axis=None)
        # makes the whole result NaN there.
        out = n.where(nan, np.nan, out)
    return n.moveaxis(out, -1, ax)


def rankdata(
    a: Any,
    method: str = "average",
    *,
    axis: int | None = None,
    nan_policy: str = "propagate",
) -> Any:
    """Ranks of the data, from 1 (float32): ``method`` 'average' (ties
    share their mean rank), 'min', 'max', 'dense' or 'ordinal'; along
    ``axis``, or over the flattened array for None. A NaN makes the
    ranks along its slice NaN (``nan_policy='propagate'`` only, as JAX)."""
    _check_nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    static = (("method", method), ("axis", None if axis is None else int(axis)))
    return _ops.apply(_rankdata, (a,), static)


def _sem(a: Any, *, axis: Any, ddof: int, nan_policy: str, keepdims: bool) -> Any:
    n = bnp()
    (b,) = inexact(a)
    if nan_policy == "propagate":
        size = math.prod(b.shape) if axis is None else b.shape[axis]
        return n.std(b, axis=axis, ddof=ddof, keepdims=keepdims) / np.sqrt(
            np.float32(size)
        ).astype(b.dtype)
    count = n.sum(~n.isnan(b), axis=axis, keepdims=keepdims)
    return n.nanstd(b, axis=axis, ddof=ddof, keepdims=keepdims) / n.sqrt(count).astype(
        b.dtype
    )


def sem(
    a: Any,
    axis: int | None = 0,
    ddof: int = 1,
    nan_policy: str = "propagate",
    *,
    keepdims: bool = False,
) -> Any:
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)`` along
    ``axis``; ``nan_policy='omit'`` leaves NaNs out (``nanstd`` over the
    count of the others)."""
    if nan_policy not in ("propagate", "omit"):
        raise ValueError(f"{nan_policy} is not supported")
    static = (
        ("axis", None if axis is None else int(axis)),
        ("ddof", int(ddof)),
        ("nan_policy", nan_policy),
        ("keepdims", bool(keepdims)),
    )
    return _ops.apply(_sem, (a,), static)
