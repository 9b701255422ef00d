"""``bt.lax``'s slicing, shape and selection helpers built from baton's
primitives, with ``jax.lax``'s names and signatures: the ``*_in_dim``
slices and updates, ``broadcast``, ``collapse``, ``expand_dims``,
``squeeze``, ``rev``, ``clamp``, ``select_n``, ``sort_key_val``, ``top_k``,
``split``, ``stack``, ``dot``, ``batch_matmul``, ``full_like``, ...

Dynamic start indices follow JAX: negative ones count from the end (with
``allow_negative_indices=True``, the default), then the slice is clamped
to fit.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import baton.numpy as bnp
from baton import _ops
from baton._baton import lax

_I32 = np.dtype(np.int32)


def _t(x: Any) -> Any:
    return _ops.as_tracer(x)


def _wrap_index(index: Any, size: int, allow_negative: bool) -> Any:
    """A start index, negative ones counted from the end (static ints stay
    Python ints)."""
    if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
        i = int(index)
        return i + size if allow_negative and i < 0 else i
    i = _t(index)
    if not allow_negative:
        return i
    return lax.select(lax.lt(i, 0), lax.add(i, size), i)


# ---- static slices ----


def slice_in_dim(
    operand: Any, start_index: Any, limit_index: Any, stride: int = 1, axis: int = 0
) -> Any:
    """``operand[..., start_index:limit_index:stride]`` along ``axis``
    (static bounds; None and negative values as in Python slicing)."""
    t = _t(operand)
    nd = len(t.shape)
    ax = _ops.normalize_axis(axis, nd)
    n = t.shape[ax]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start = start + n if start < 0 else start
    limit = limit + n if limit < 0 else limit
    lo, hi, st = [0] * nd, list(t.shape), [1] * nd
    lo[ax], hi[ax], st[ax] = start, limit, int(stride)
    return lax.slice(t, lo, hi, st)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The static ``index`` along ``axis`` (negative from the end), that
    dimension kept with size 1 if ``keepdims``."""
    t = _t(operand)
    ax = _ops.normalize_axis(axis, len(t.shape))
    n = t.shape[ax]
    i = operator.index(index)
    i = i + n if i < 0 else i
    if not 0 <= i < n:
        raise IndexError(
            f"index {index} is out of bounds for axis {axis} with size {n}"
        )
    out = slice_in_dim(t, i, i + 1, 1, ax)
    return out if keepdims else lax.reshape(out, t.shape[:ax] + t.shape[ax + 1 :])


# ---- dynamic slices ----


def dynamic_slice_in_dim(
    operand: Any,
    start_index: Any,
    slice_size: int,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """``slice_size`` elements from a (possibly traced) ``start_index``
    along ``axis``; the start is clamped so that the slice fits."""
    t = _t(operand)
    nd = len(t.shape)
    ax = _ops.normalize_axis(axis, nd)
    starts: list[Any] = [0] * nd
    starts[ax] = _wrap_index(start_index, t.shape[ax], allow_negative_indices)
    sizes = list(t.shape)
    sizes[ax] = int(slice_size)
    return lax.dynamic_slice(t, starts, sizes)


def dynamic_index_in_dim(
    operand: Any,
    index: Any,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """The element at a (possibly traced) ``index`` along ``axis``."""
    t = _t(operand)
    ax = _ops.normalize_axis(axis, len(t.shape))
    out = dynamic_slice_in_dim(
        t, index, 1, ax, allow_negative_indices=allow_negative_indices
    )
    return out if keepdims else lax.reshape(out, t.shape[:ax] + t.shape[ax + 1 :])


def dynamic_update_slice_in_dim(
    operand: Any,
    update: Any,
    start_index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """``operand`` with ``update`` written from ``start_index`` along
    ``axis`` (zero elsewhere); the start is clamped so that it fits."""
    t = _t(operand)
    nd = len(t.shape)
    ax = _ops.normalize_axis(axis, nd)
    starts: list[Any] = [0] * nd
    starts[ax] = _wrap_index(start_index, t.shape[ax], allow_negative_indices)
    return lax.dynamic_update_slice(t, update, starts)


def dynamic_update_index_in_dim(
    operand: Any,
    update: Any,
    index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """``operand`` with the slice at ``index`` along ``axis`` replaced by
    ``update`` (which may lack that dimension)."""
    t = _t(operand)
    nd = len(t.shape)
    ax = _ops.normalize_axis(axis, nd)
    u = _t(update)
    if len(u.shape) == nd - 1:
        u = lax.reshape(u, (*u.shape[:ax], 1, *u.shape[ax:]))
    return dynamic_update_slice_in_dim(
        t, u, index, ax, allow_negative_indices=allow_negative_indices
    )


# ---- shapes ----


def broadcast(operand: Any, sizes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """``operand`` with new leading dimensions ``sizes``."""
    t = _t(operand)
    sizes = tuple(int(s) for s in sizes)
    nd = len(t.shape)
    shape = sizes + tuple(t.shape)
    return lax.broadcast_in_dim(t, shape, tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast (numpy rules) to the shape of ``like_arr``."""
    return lax.broadcast_to(_t(arr), tuple(_ops.shape_of(like_arr)))


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading size-1 dimensions added up to ``rank``."""
    t = _t(x)
    nd = len(t.shape)
    return t if nd == rank else broadcast(t, (1,) * (int(rank) - nd))


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The numpy broadcast of the given shapes."""
    return tuple(bnp.broadcast_shapes(*shapes))


def broadcasted_iota(
    dtype: Any, shape: Sequence[int], dimension: int, *, out_sharding: Any = None
) -> Any:
    """An array of ``shape`` whose values count along ``dimension``."""
    return lax.iota(np.dtype(dtype), tuple(int(s) for s in shape), int(dimension))


def collapse(operand: Any, start_dimension: int, stop_dimension: Any = None) -> Any:
    """``operand`` with dimensions ``[start, stop)`` merged into one."""
    t = _t(operand)
    shape = tuple(t.shape)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(
            f"Invalid dimension range passed to collapse: {shape}"
            f"[{start_dimension}:{stop_dimension}]"
        )
    return lax.reshape(t, (*shape[:lo], math.prod(shape[lo:hi]), *shape[hi:]))


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` with size-1 dimensions inserted at ``dimensions`` (result
    positions; negative ones count from the result's end)."""
    t = _t(array)
    dims = list(dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    nd_out = len(t.shape) + len(dims)
    dims = sorted(_ops.normalize_axis(d, nd_out) for d in dims)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    shape = list(t.shape)
    for d in dims:
        shape.insert(d, 1)
    return lax.reshape(t, tuple(shape))


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` without the size-1 ``dimensions``."""
    t = _t(array)
    nd = len(t.shape)
    dims = {_ops.normalize_axis(d, nd) for d in dimensions}
    for d in dims:
        if t.shape[d] != 1:
            raise ValueError(
                f"cannot select an axis to squeeze out which has size not equal "
                f"to one, got shape={tuple(t.shape)} and dimensions={tuple(dimensions)}"
            )
    return lax.reshape(t, tuple(s for i, s in enumerate(t.shape) if i not in dims))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """``operand`` reversed along each of ``dimensions``."""
    dims = tuple(int(d) for d in dimensions)
    t = _t(operand)
    return bnp.flip(t, axis=dims) if dims else t


def clamp(min: Any, x: Any, max: Any) -> Any:
    """``x`` clipped elementwise to ``[min, max]``."""
    return lax.minimum(lax.maximum(x, min), max)


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise: ``which`` is bool (two cases) or an
    integer in ``[0, len(cases))``."""
    if not cases:
        raise ValueError("select_n() must have at least one case")
    if len(cases) == 1:
        return _t(cases[0])
    w = _t(which)
    if np.dtype(w.dtype) == np.dtype(bool):
        if len(cases) > 2:
            raise TypeError("select_n with a bool `which` takes at most two cases")
        return lax.select(w, cases[1], cases[0])
    out = _t(cases[-1])
    for i in range(len(cases) - 2, -1, -1):
        out = lax.select(lax.le(w, i), cases[i], out)
    return out


def full_like(
    x: Any, fill_value: Any, dtype: Any = None, shape: Any = None, sharding: Any = None
) -> Any:
    """An array like ``x`` (its shape and dtype unless given) filled with
    ``fill_value``."""
    s = _ops.shape_of(x) if shape is None else tuple(int(v) for v in shape)
    d = np.dtype(dtype) if dtype is not None else _ops.dtype_of(x)
    if d is None:
        d = _ops.weak_dtype(x, None)
    return lax.full(s, fill_value, d)


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` (zeros; its values are not to be
    relied on)."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return lax.zeros(tuple(int(s) for s in dims), np.dtype(dtype))


def dtype(x: Any) -> np.dtype:
    """The (canonical) dtype of ``x``; a Python scalar's default dtype."""
    d = _ops.dtype_of(x)
    return d if d is not None else _ops.weak_dtype(x, None)


# ---- sorting and selection ----


def _take_along(x: Any, idx: Any, axis: int) -> Any:
    return bnp.take_along_axis(x, idx, axis=axis)


def sort_key_val(
    keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
) -> Any:
    """``(keys, values)`` sorted along ``dimension`` by ``keys`` (stably)."""
    k = _t(keys)
    order = lax.argsort(k, int(dimension))
    return _take_along(k, order, int(dimension)), _take_along(
        _t(values), order, int(dimension)
    )


def sort(
    operand: Any,
    dimension: int = -1,
    *args: Any,
    is_stable: bool = True,
    num_keys: int = 1,
    descending: bool = False,
) -> Any:
    """JAX's ``lax.sort``: ``operand`` sorted along ``dimension`` (stably;
    NaNs last), or, for a sequence of same-shaped operands, all of them
    permuted by the lexicographic order of the first ``num_keys`` (a
    tuple back). The positional arguments after ``dimension`` are JAX's
    ``is_stable, num_keys``; baton's sorts are always stable. baton adds
    the keyword ``descending=True`` (largest first, NaNs first).

    >>> bt.lax.sort(bnp.array([3, 1, 2]))
    Array([1, 2, 3], dtype=int32)
    >>> k, v = bt.lax.sort((bnp.array([2, 0, 1]), bnp.array([10., 20., 30.])))
    >>> v
    Array([20., 30., 10.], dtype=float32)
    """
    del is_stable  # baton's sorts are stable
    if len(args) > 2:
        raise TypeError("sort: takes (operand, dimension, is_stable, num_keys)")
    if len(args) == 2:
        num_keys = args[1]
    if not isinstance(operand, (tuple, list)):
        if int(num_keys) != 1:
            raise ValueError(f"sort: num_keys={num_keys} for a single operand")
        return lax.sort(_t(operand), int(dimension), bool(descending))
    ops = [_t(o) for o in operand]
    if not ops:
        raise ValueError("sort: needs at least one operand")
    nk = int(num_keys)
    if not 1 <= nk <= len(ops):
        raise ValueError(
            f"sort: num_keys={num_keys} must be in [1, {len(ops)}] "
            "(the number of operands)"
        )
    shape = tuple(ops[0].shape)
    for o in ops[1:]:
        if tuple(o.shape) != shape:
            raise ValueError(
                f"sort: all operands must have the same shape, got {shape} "
                f"and {tuple(o.shape)}"
            )
    ax = _ops.normalize_axis(int(dimension), len(shape))
    # Stable sorts from the last key to the first: lexicographic order.
    order = lax.argsort(ops[nk - 1], ax, bool(descending))
    for key in reversed(ops[: nk - 1]):
        step = lax.argsort(_take_along(key, order, ax), ax, bool(descending))
        order = _take_along(order, step, ax)
    return tuple(_take_along(o, order, ax) for o in ops)


def pad(
    operand: Any,
    padding_value: Any,
    padding_config: Any = None,
    high: Any = None,
    interior: Any = None,
    *,
    low: Any = None,
) -> Any:
    """JAX's ``lax.pad``: ``operand`` padded with ``padding_value`` per
    ``padding_config``, a ``(low, high, interior)`` triple per dimension
    (negative low/high crop). baton's own form ``pad(x, value, low, high,
    interior=None)`` (a sequence each) is kept.

    >>> bt.lax.pad(bnp.array([1., 2.]), 0., [(1, 2, 1)])
    Array([0., 1., 0., 2., 0., 0.], dtype=float32)
    """
    if low is not None:
        if padding_config is not None:
            raise TypeError("pad: give padding_config or low=, not both")
        padding_config = low
    if high is None:
        if padding_config is None:
            raise TypeError("pad: padding_config is required")
        config = [tuple(int(v) for v in c) for c in padding_config]
        for c in config:
            if len(c) != 3:
                raise ValueError(
                    "pad: each padding_config entry must be (low, high, "
                    f"interior), got {c}"
                )
        lo = [c[0] for c in config]
        hi = [c[1] for c in config]
        inner = [c[2] for c in config]
        return lax.pad(_t(operand), padding_value, lo, hi, inner)
    return lax.pad(_t(operand), padding_value, padding_config, high, interior)


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """``(values, indices)`` of the ``k`` largest entries along ``axis``,
    largest first (of equal ones the lower index first); indices int32."""
    k = operator.index(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    t = _t(operand)
    ax = _ops.normalize_axis(axis, len(t.shape))
    order = lax.argsort(t, ax, True)
    idx = slice_in_dim(order, 0, min(k, t.shape[ax]), 1, ax)
    return _take_along(t, idx, ax), lax.astype(idx, _I32)


# ---- joining and splitting ----


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """``operand`` cut along ``axis`` into pieces of the given ``sizes``
    (which add up to that dimension)."""
    t = _t(operand)
    ax = _ops.normalize_axis(axis, len(t.shape))
    sizes = [int(s) for s in sizes]
    if sum(sizes) != t.shape[ax]:
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {t.shape[ax]} "
            f"of the operand shape {tuple(t.shape)}"
        )
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(t, start, start + s, 1, ax))
        start += s
    return out


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """The operands (of one shape) stacked along a new ``axis``."""
    ts = [_t(o) for o in operands]
    nd = len(ts[0].shape) + 1
    ax = _ops.normalize_axis(axis, nd)
    return lax.concatenate([expand_dims(t, (ax,)) for t in ts], ax)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    t = _t(x)
    ax = _ops.normalize_axis(axis, len(t.shape))
    return tuple(index_in_dim(t, i, ax, keepdims=False) for i in range(t.shape[ax]))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along each dimension i."""
    return bnp.tile(operand, tuple(int(r) for r in reps))


# ---- contractions ----


def dot(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Vector/matrix products (the last dimension of ``lhs`` with the first
    of ``rhs``), or ``dot_general`` when ``dimension_numbers`` are given."""
    a, b = _t(lhs), _t(rhs)
    if dimension_numbers is None:
        if len(a.shape) not in (1, 2) or len(b.shape) not in (1, 2):
            raise TypeError(
                f"dot: without dimension_numbers the operands must be 1-D or 2-D, "
                f"got shapes {tuple(a.shape)} and {tuple(b.shape)}"
            )
        dimension_numbers = (((len(a.shape) - 1,), (0,)), ((), ()))
    out = lax.dot_general(a, b, dimension_numbers)
    if preferred_element_type is not None:
        out = lax.astype(out, np.dtype(preferred_element_type))
    return out


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Batched matrix products of operands of equal rank (>= 2)."""
    a, b = _t(lhs), _t(rhs)
    na, nb = len(a.shape), len(b.shape)
    if min(na, nb) < 2:
        raise ValueError(
            f"Arguments to batch_matmul must be at least 2D, got {na}, {nb}"
        )
    if na != nb:
        raise ValueError(
            f"Arguments to batch_matmul must have same ndim, got {na}, {nb}"
        )
    batch = tuple(range(na - 2))
    return lax.dot_general(a, b, (((na - 1,), (nb - 2,)), (batch, batch)))


__all__ = [
    "batch_matmul",
    "broadcast",
    "broadcast_like",
    "broadcast_shapes",
    "broadcast_to_rank",
    "broadcasted_iota",
    "clamp",
    "collapse",
    "dot",
    "dtype",
    "dynamic_index_in_dim",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice_in_dim",
    "empty",
    "expand_dims",
    "full_like",
    "index_in_dim",
    "pad",
    "rev",
    "select_n",
    "slice_in_dim",
    "sort",
    "sort_key_val",
    "split",
    "squeeze",
    "stack",
    "tile",
    "top_k",
    "unstack",
]

# Not operations on arrays: bt.lax leaves them unwrapped.
NOT_OPERATIONS = frozenset({"broadcast_shapes", "dtype"})
# JAX's forms of the C++ bindings of these names (which they keep).
OVERRIDES = frozenset({"pad", "sort"})
