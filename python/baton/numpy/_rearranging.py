"""Rearranging the elements of an array: flips (fliplr, flipud), rot90,
roll, axis permutations (rollaxis, permute_dims, matrix_transpose), and
repeat / tile / resize.

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
from baton._baton import Array, lax
from baton.errors import ConcretizationTypeError
from baton.numpy import _creation as _cr
from baton.numpy import _shapes as _sh
from baton.numpy._selection import (
    _along,
    _check_int_tracer,
    _concrete,
    _cumsum0,
    _run,
    _traced,
)

Tracer = lax.Tracer
_I32 = np.dtype(np.int32)

__all__ = [
    "fliplr",
    "flipud",
    "matrix_transpose",
    "permute_dims",
    "repeat",
    "resize",
    "roll",
    "rollaxis",
    "rot90",
    "tile",
]


# ---- flips, rotations, rolls, axis permutations ----


def fliplr(m: Any) -> Any:
    """Columns reversed (axis 1 flipped); needs at least 2 dimensions.

    >>> bnp.fliplr(bnp.eye(2))    # [[0. 1.] [1. 0.]]
    """
    if _sh.ndim(m) < 2:
        raise ValueError(
            f"fliplr: the input must be at least 2-d, got shape {_ops.shape_of(m)}"
        )
    return _sh.flip(m, 1)


def flipud(m: Any) -> Any:
    """Rows reversed (axis 0 flipped); needs at least 1 dimension.

    >>> bnp.flipud(bnp.arange(3))    # [2 1 0]
    """
    if _sh.ndim(m) < 1:
        raise ValueError("flipud: the input must be at least 1-d, got a 0-d array")
    return _sh.flip(m, 0)


def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """``m`` rotated by k * 90 degrees in the plane of ``axes`` (from the
    first axis towards the second).

    >>> bnp.rot90(bnp.array([[1, 2], [3, 4]]))    # [[2 4] [1 3]]
    """
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got axes={axes}")
    nd = _sh.ndim(m)
    if nd < 2:
        raise ValueError(f"rot90: the input must be at least 2-d, got {nd}-d")
    a0 = _ops.normalize_axis(axes[0], nd, "axes[0]")
    a1 = _ops.normalize_axis(axes[1], nd, "axes[1]")
    if a0 == a1:
        raise ValueError(f"rot90: the two axes must be different, got axes={axes}")
    k = operator.index(k) % 4
    if k == 0:
        return _sh.asarray_like(m)
    if k == 2:
        return _sh.flip(m, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = a1, a0
    if k == 1:
        return _sh.transpose(_sh.flip(m, a1), perm)
    return _sh.flip(_sh.transpose(m, perm), a1)


def _roll_static(a: Any, *, shifts: tuple[tuple[int, int], ...]) -> Any:
    t = _ops.as_tracer(a)
    for ax, s in shifts:
        n = t.shape[ax]
        head = t[_along(t, ax, slice(n - s, None))]
        tail = t[_along(t, ax, slice(0, n - s))]
        t = lax.concatenate([head, tail], ax)
    return t


def _roll_traced(a: Any, shift: Any, *, axes: tuple[int, ...]) -> Any:
    t = _ops.as_tracer(a)
    sh = _ops.as_tracer(shift)
    for j, ax in enumerate(axes):
        n = t.shape[ax]
        if n == 0:
            continue
        s = sh if sh.ndim == 0 else sh[j]
        s = lax.astype(s, _I32) if s.dtype.itemsize < 4 else s
        idx = lax.mod(lax.sub(lax.iota(s.dtype, (n,)), s), n)
        t = lax.take(t, idx, ax)
    return t


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Elements shifted by ``shift`` along ``axis`` (None: the flattened
    array), those that fall off one end coming back at the other. Shifts
    may be traced.

    >>> bnp.roll(bnp.arange(5), 2)    # [3 4 0 1 2]
    """
    s = _ops.shape_of(a)
    if axis is None:
        return _sh.reshape(roll(_sh.ravel(a), shift, 0), s)
    axes = tuple(_ops.normalize_axis(ax, len(s)) for ax in _sh._ints(axis, "axis"))
    if isinstance(shift, (Array, Tracer)):
        _check_int_tracer(shift, "roll", "shift")
        if shift.ndim > 1 or (shift.ndim == 1 and shift.shape[0] not in (1, len(axes))):
            raise ValueError(
                f"roll: shift of shape {tuple(shift.shape)} does not match "
                f"{len(axes)} axes"
            )
        if shift.ndim == 1 and shift.shape[0] == 1:
            shift = _sh.reshape(shift, ())
        return _run(_roll_traced, (a, shift), axes=axes)
    shifts = _sh._ints(shift, "shift")
    try:
        pairs = np.broadcast(np.asarray(shifts), np.asarray(axes))
    except ValueError:
        raise ValueError(
            f"roll: shift {shifts} and axis {axes} must have the same length "
            "(or one of them be a single value)"
        ) from None
    total: dict[int, int] = {}
    for sh_, ax in pairs:
        total[int(ax)] = total.get(int(ax), 0) + int(sh_)
    todo = tuple(
        (ax, sh_ % s[ax]) for ax, sh_ in sorted(total.items()) if s[ax] and sh_ % s[ax]
    )
    if not todo:
        return _sh.asarray_like(a)
    return _run(_roll_static, (a,), shifts=todo)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Axis ``axis`` moved to lie before position ``start`` (numpy's older
    form of ``moveaxis``).

    >>> bnp.rollaxis(bnp.ones((2, 3, 4)), 2).shape    # (4, 2, 3)
    """
    nd = _sh.ndim(a)
    ax = _ops.normalize_axis(axis, nd)
    start = operator.index(start)
    if not -nd <= start <= nd:
        raise np.exceptions.AxisError(
            f"rollaxis: start must satisfy -{nd} <= start <= {nd}, got {start}"
        )
    if start < 0:
        start += nd
    if ax < start:
        start -= 1
    if ax == start:
        return _sh.asarray_like(a)
    return _sh.moveaxis(a, ax, start)


def permute_dims(a: Any, /, axes: Any) -> Any:
    """The array API's ``transpose``: the dimensions in the order ``axes``.

    >>> bnp.permute_dims(bnp.ones((2, 3, 4)), (2, 0, 1)).shape    # (4, 2, 3)
    """
    return _sh.transpose(a, axes)


def matrix_transpose(x: Any, /) -> Any:
    """The last two axes swapped (a batch of matrices transposed).

    >>> bnp.matrix_transpose(bnp.ones((5, 2, 3))).shape    # (5, 3, 2)
    """
    nd = _sh.ndim(x)
    if nd < 2:
        raise ValueError(
            f"matrix_transpose: x must be at least two-dimensional, got ndim={nd}"
        )
    return _sh.swapaxes(x, -1, -2)


# ---- repeat, tile, resize ----


def _repeat_traced(a: Any, r: Any, *, axis: int, total: int) -> Any:
    t = _ops.as_tracer(a)
    n = t.shape[axis]
    rr = lax.broadcast_to(lax.astype(_ops.as_tracer(r), _I32), (n,))
    ends = _cumsum0(rr)  # out[p] = number of ends <= p
    marks = lax.scatter(
        lax.full((total,), 0, _I32), ends, lax.full((n,), 1, _I32), 0, "add"
    )
    idx = lax.minimum(_cumsum0(marks), n - 1)
    return lax.take(t, idx, axis)


def repeat(
    a: Any,
    repeats: Any,
    axis: int | None = None,
    *,
    total_repeat_length: int | None = None,
) -> Any:
    """Each element repeated ``repeats`` times along ``axis`` (None: of the
    flattened array); ``repeats`` an int or one count per element. Traced
    repeats need ``total_repeat_length`` (the result is cut to it or padded
    with the last element, as in JAX).

    >>> bnp.repeat(bnp.arange(3), [1, 0, 2])    # [0 2 2]
    """
    if axis is None:
        a = _sh.ravel(a)
        axis = 0
    s = _ops.shape_of(a)
    ax = _ops.normalize_axis(axis, len(s))
    n = s[ax]
    L = None if total_repeat_length is None else operator.index(total_repeat_length)
    if L is not None and L < 0:
        raise ValueError(f"repeat: total_repeat_length must be >= 0, got {L}")
    if isinstance(repeats, (Array, Tracer)) and (_traced(repeats) or L is not None):
        if L is None:
            raise ConcretizationTypeError(
                "repeat: `repeats` is traced, so the result's length is unknown; "
                "pass total_repeat_length= (a static int)"
            )
        _check_int_tracer(repeats, "repeat", "repeats")
        if repeats.ndim > 1 or (repeats.ndim == 1 and repeats.shape[0] not in (1, n)):
            raise ValueError(
                f"repeat: repeats of shape {tuple(repeats.shape)} does not match the "
                f"axis length {n}"
            )
        if n == 0:
            if L:
                raise ValueError(f"repeat: cannot make {L} elements from an empty axis")
            return _sh.take(a, np.zeros(0, np.int32), axis=ax)
        return _run(_repeat_traced, (a, repeats), axis=ax, total=L)
    r = _concrete(repeats, "repeat", "repeats")
    if r.dtype.kind not in "iu" and not (r.dtype.kind == "b" or r.size == 0):
        raise TypeError(f"repeat: repeats must be integers, not {r.dtype}")
    if r.ndim > 1:
        raise ValueError(f"repeat: repeats must be an int or 1-D, got shape {r.shape}")
    if r.size and r.min() < 0:
        raise ValueError("repeat: repeats may not contain negative values")
    try:
        r = np.broadcast_to(r.astype(np.int64), (n,))
    except ValueError:
        raise ValueError(
            f"repeat: {r.size} repeats do not match the axis length {n}"
        ) from None
    idx = np.repeat(np.arange(n), r)
    if L is not None:
        if len(idx) >= L:
            idx = idx[:L]
        elif n == 0:
            raise ValueError(f"repeat: cannot make {L} elements from an empty axis")
        else:
            # padded with the last element of a (JAX's rule)
            idx = np.concatenate([idx, np.full(L - len(idx), n - 1)])
    return _sh.take(a, idx.astype(_index_plan.index_dtype(n)), axis=ax)


def _tile(a: Any, *, s: tuple[int, ...], reps: tuple[int, ...]) -> Any:
    t = _ops.as_tracer(a)
    inter = tuple(v for d in s for v in (1, d))
    big = tuple(v for r, d in zip(reps, s) for v in (r, d))
    t = lax.broadcast_to(lax.reshape(t, inter), big)
    return lax.reshape(t, tuple(r * d for r, d in zip(reps, s)))


def tile(A: Any, reps: Any) -> Any:
    """``A`` repeated ``reps`` times along each axis (shapes padded with
    leading 1s to the same length).

    >>> bnp.tile(bnp.arange(2), (2, 2))    # [[0 1 0 1] [0 1 0 1]]
    """
    reps = _sh._ints(reps, "reps")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    s = _ops.shape_of(A)
    d = max(len(s), len(reps))
    s = (1,) * (d - len(s)) + s
    reps = (1,) * (d - len(reps)) + reps
    return _run(_tile, (A,), s=s, reps=reps)


def resize(a: Any, new_shape: Any) -> Any:
    """An array of ``new_shape`` filled with the flattened elements of ``a``,
    repeated as often as needed (zeros if ``a`` is empty).

    >>> bnp.resize(bnp.arange(3), (2, 2))    # [[0 1] [2 0]]
    """
    new = _sh._ints(new_shape, "new_shape")
    if any(d < 0 for d in new):
        raise ValueError(
            f"resize: all elements of new_shape must be non-negative, got {new}"
        )
    total = int(np.prod(new, dtype=np.int64))
    n = _sh.size(a)
    if n == 0:
        d = _ops.dtype_of(a) or _ops.result_dtype(a)
        return _cr.zeros(new, d)
    idx = (np.arange(total, dtype=np.int64) % n).astype(_index_plan.index_dtype(n))
    return _sh.reshape(_sh.take(_sh.ravel(a), idx), new)
