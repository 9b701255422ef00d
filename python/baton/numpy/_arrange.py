"""Array arrangement of ``baton.numpy``: joining and splitting variants,
flips, rotations and rolls, axis permutations, repeat / tile / resize,
kron / vander, diagonals and trace.

Everything is a composition of the other ``baton.numpy`` functions and
``bt.lax``; most run as one program through ``_ops.apply`` (one compile
per static parameters and argument signature), eagerly or inside
``bt.jit``. Semantics are jax.numpy's.

This module also re-exports ``_along_axis`` (take / put along an axis,
apply_along_axis), ``_selection`` (insert / delete, select / choose,
compress / extract / place / put, ...) and
``_index_tricks`` (mgrid, r_, tril_indices, unravel_index, ...), so that
``baton.numpy`` picks them up through ``_arrange``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _index_plan, _ops
from baton._baton import Array, lax
from baton.errors import ConcretizationTypeError
from baton.numpy import _along_axis, _index_tricks, _selection
from baton.numpy import _creation as _cr
from baton.numpy import _elementwise as _el
from baton.numpy import _reductions as _red
from baton.numpy import _shapes as _sh
from baton.numpy._along_axis import *  # noqa: F403
from baton.numpy._index_tricks import *  # noqa: F403
from baton.numpy._selection import *  # noqa: F403
from baton.numpy._selection import (
    _along,
    _check_int_tracer,
    _concrete,
    _cumsum0,
    _run,
    _traced,
    _weak_like,
)

Tracer = lax.Tracer
_I32 = np.dtype(np.int32)
_BOOL = np.dtype(np.bool_)

__all__ = [
    "append",
    "array_split",
    "atleast_3d",
    "block",
    "column_stack",
    "concat",
    "diag",
    "diagflat",
    "diagonal",
    "dsplit",
    "dstack",
    "fliplr",
    "flipud",
    "hsplit",
    "kron",
    "matrix_transpose",
    "permute_dims",
    "repeat",
    "resize",
    "roll",
    "rollaxis",
    "rot90",
    "tile",
    "trace",
    "unstack",
    "vander",
    "vsplit",
]
__all__ += _along_axis.__all__
__all__ += _index_tricks.__all__
__all__ += _selection.__all__


# ---- joining and splitting ----


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` appended to ``arr`` along ``axis`` (None: both flattened).

    >>> bnp.append(bnp.arange(3), [7, 8])    # [0 1 2 7 8]
    """
    values = _weak_like(values, arr)
    if axis is None:
        return _sh.concatenate([_sh.ravel(arr), _sh.ravel(values)], 0)
    return _sh.concatenate([arr, values], axis)


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    """The array API's name for ``concatenate``.

    >>> bnp.concat([bnp.zeros(2), bnp.ones(1)])    # [0. 0. 1.]
    """
    return _sh.concatenate(arrays, axis)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Like ``split``, but N sections need not divide the axis: the first
    ``len % N`` pieces get one element more.

    >>> [p.shape for p in bnp.array_split(bnp.arange(7), 3)]   # [(3,), (2,), (2,)]
    """
    s = _ops.shape_of(ary)
    ax = _ops.normalize_axis(axis, len(s))
    ios = indices_or_sections
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, (bool, np.bool_)):
        k = int(ios)
        if k <= 0:
            raise ValueError(
                f"array_split: the number of sections must be > 0, got {k}"
            )
        q, r = divmod(s[ax], k)
        cuts = np.cumsum([q + 1] * r + [q] * (k - r))[:-1]
        return _sh.split(ary, [int(c) for c in cuts], ax)
    return _sh.split(ary, ios, ax)


def _split_along(name: str, ary: Any, ios: Any, axis: int, need: int) -> list[Any]:
    nd = _sh.ndim(ary)
    if nd < need:
        raise ValueError(
            f"{name} only works on arrays of {need} or more dimensions; got an "
            f"array of shape {_ops.shape_of(ary)}"
        )
    return _sh.split(ary, ios, axis)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 1 (axis 0 for 1-D arrays).

    >>> bnp.hsplit(bnp.ones((2, 4)), 2)[0].shape    # (2, 2)
    """
    axis = 1 if _sh.ndim(ary) > 1 else 0
    return _split_along("hsplit", ary, indices_or_sections, axis, 1)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 0 of an array of at least 2 dimensions.

    >>> bnp.vsplit(bnp.ones((4, 2)), [1])[1].shape    # (3, 2)
    """
    return _split_along("vsplit", ary, indices_or_sections, 0, 2)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``split`` along axis 2 of an array of at least 3 dimensions.

    >>> bnp.dsplit(bnp.ones((1, 2, 4)), 2)[0].shape    # (1, 2, 2)
    """
    return _split_along("dsplit", ary, indices_or_sections, 2, 3)


def atleast_3d(*arys: Any) -> Any:
    """Each array with at least 3 dimensions: 0-d -> (1, 1, 1), (N,) ->
    (1, N, 1), (M, N) -> (M, N, 1).

    >>> bnp.atleast_3d(bnp.ones(4)).shape    # (1, 4, 1)
    """
    from baton.numpy._shapes import asarray_like

    out = []
    for a in arys:
        a = asarray_like(a)  # sequences converted, as jnp does
        s = _ops.shape_of(a)
        if len(s) == 0:
            new = (1, 1, 1)
        elif len(s) == 1:
            new = (1, s[0], 1)
        elif len(s) == 2:
            new = (*s, 1)
        else:
            new = s
        out.append(_sh.asarray_like(a) if new == s else _sh.reshape(a, new))
    return out[0] if len(out) == 1 else out


def dstack(tup: Any, dtype: Any = None) -> Any:
    """The arrays (made at least 3-d) joined along axis 2.

    >>> bnp.dstack([bnp.ones(3), bnp.zeros(3)]).shape    # (1, 3, 2)
    """
    arrs = [atleast_3d(a) for a in _sh._operands(tup, "dstack")]
    return _sh.concatenate(arrs, 2, dtype)


def column_stack(tup: Any) -> Any:
    """1-D arrays as the columns of a 2-D array (others joined on axis 1).

    >>> bnp.column_stack([bnp.arange(3), bnp.arange(3)]).shape    # (3, 2)
    """
    arrs = [
        _sh.reshape(a, (-1, 1)) if _sh.ndim(a) < 2 else a
        for a in _sh._operands(tup, "column_stack")
    ]
    return _sh.concatenate(arrs, 1)


def _block_depth(x: Any, path: str) -> tuple[int, int]:
    """(list depth, largest leaf ndim) of a nested list for ``block``."""
    if isinstance(x, tuple):
        raise TypeError(
            f"block: arrays{path} is a tuple; nest the blocks in lists (tuples "
            "are not allowed, as in numpy)"
        )
    if not isinstance(x, list):
        return 0, _sh.ndim(x)
    if not x:
        raise ValueError(f"block: arrays{path} is an empty list; lists cannot be empty")
    parts = [_block_depth(e, f"{path}[{i}]") for i, e in enumerate(x)]
    depths = {d for d, _ in parts}
    if len(depths) != 1:
        raise ValueError(
            f"block: list depths are mismatched inside arrays{path} (depths "
            f"{sorted(depths)}); every leaf must be nested equally deep"
        )
    return parts[0][0] + 1, max(n for _, n in parts)


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks: the innermost lists
    are joined along the last axis, the next ones along the one before, ...

    >>> bnp.block([[bnp.eye(2), bnp.zeros((2, 1))], [bnp.ones((1, 3))]]).shape  # (3, 3)
    """
    depth, nd = _block_depth(arrays, "")
    nd = max(nd, depth)

    def build(x: Any, level: int) -> Any:
        if not isinstance(x, list):
            s = _ops.shape_of(x)
            return _sh.reshape(x, (1,) * (nd - len(s)) + s)
        return _sh.concatenate([build(e, level + 1) for e in x], level - depth - 1)

    if depth == 0:
        return _cr.array(arrays)
    return build(arrays, 1)


def _unstack(x: Any, *, axis: int) -> Any:
    t = _ops.as_tracer(x)
    return tuple(t[_along(t, axis, i)] for i in range(t.shape[axis]))


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple.

    >>> len(bnp.unstack(bnp.ones((3, 2))))    # 3
    """
    s = _ops.shape_of(x)
    ax = _ops.normalize_axis(axis, len(s))
    if s[ax] == 0:
        return ()
    return tuple(_run(_unstack, (x,), axis=ax))


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


# ---- repeat, tile, resize, kron, vander ----


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
