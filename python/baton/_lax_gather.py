"""XLA-style gather and scatter of ``bt.lax`` (``jax.lax.gather`` and
``jax.lax.scatter``), with JAX's ``GatherDimensionNumbers`` and
``ScatterDimensionNumbers``.

Every output element's position in the operand is computed from the
dimension numbers (the index vector is the last dimension of the indices,
as in JAX), then read through baton's one-dimensional take of the
flattened operand (the scatter goes through ``_lax_scatter``'s positions
and baton's one-dimensional scatter). Out-of-bounds windows follow
``mode``: gather's default (``None``: PROMISE_IN_BOUNDS, clamped as XLA
does), ``'clip'`` clamps the start, ``'fill'`` (FILL_OR_DROP) gives the
whole window ``fill_value`` (JAX's default: NaN for floats, the minimum of
signed and the maximum of unsigned integers, True for bool).

baton's own forms stay: ``gather(x, indices, axis=0)`` (numpy's take) and
``scatter(x, indices, updates, axis=0, mode='set')`` run when no
dimension numbers are given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._lax_scatter import (
    GatherScatterMode,
    ScatterDimensionNumbers,
    _scatter,
    _window_starts,
)

_I32 = np.dtype(np.int32)


class GatherDimensionNumbers(NamedTuple):
    """How a gather's output maps to its operand (XLA's and JAX's fields):
    ``offset_dims`` (output dimensions holding a slice's dimensions),
    ``collapsed_slice_dims`` (operand dimensions of slice size 1 left out
    of the output), ``start_index_map`` (the operand dimension each entry
    of an index vector starts), and the two batching dimension lists.

    >>> dn = bt.lax.GatherDimensionNumbers(
    ...     offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    >>> x = bnp.arange(6.0).reshape(3, 2)
    >>> bt.lax.gather(x, bnp.array([[2], [0]]), dn, (1, 2))
    Array([[4., 5.],
           [0., 1.]], dtype=float32)
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


def _fill_value(dtype: np.dtype, fill_value: Any) -> Any:
    if fill_value is not None:
        return fill_value
    if dtype.kind in "fc" or str(dtype) == "bfloat16":
        return float("nan")
    if dtype.kind == "i":
        return int(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return int(np.iinfo(dtype).max)
    if dtype.kind == "b":
        return True
    raise ValueError(f"gather: unsupported dtype for fill_value {dtype}")


def _xla_gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    mode: Any,
    fill_value: Any,
) -> Any:
    x = _ops.as_tracer(operand)
    o_shape = tuple(x.shape)
    r = len(o_shape)
    dn = GatherDimensionNumbers(*dimension_numbers)
    for field in ("offset_dims", "collapsed_slice_dims", "operand_batching_dims"):
        dims = tuple(int(d) for d in getattr(dn, field))
        if dims != tuple(sorted(dims)):
            raise TypeError(f"{field} in gather op must be sorted; got {dims}")
    sizes = tuple(int(s) for s in slice_sizes)
    if len(sizes) != r:
        raise ValueError(
            f"gather: slice_sizes must have one entry per operand dimension "
            f"({r}), got {sizes}"
        )
    collapsed = {int(d) for d in dn.collapsed_slice_dims}
    obatch = [int(d) for d in dn.operand_batching_dims]
    ibatch = [int(d) for d in dn.start_indices_batching_dims]
    to_operand = [int(d) for d in dn.start_index_map]
    for d in (*collapsed, *obatch):
        if sizes[d] != 1:
            raise ValueError(
                f"gather: slice_sizes[{d}] must be 1 for a collapsed or "
                f"batching operand dimension, got {sizes[d]}"
            )
    for d in range(r):
        if not 0 <= sizes[d] <= o_shape[d]:
            raise ValueError(
                f"gather: slice_sizes[{d}] = {sizes[d]} out of range for "
                f"operand dimension of size {o_shape[d]}"
            )
    idx = lax.astype(_ops.as_tracer(start_indices), _I32)
    i_shape = tuple(idx.shape)
    if not i_shape:
        raise ValueError("gather: start_indices must have at least one dimension")
    batch_shape, k = i_shape[:-1], i_shape[-1]
    if k != len(to_operand):
        raise ValueError(
            f"gather: the index vector has {k} entries for "
            f"{len(to_operand)} start_index_map dimensions"
        )
    window_o = [d for d in range(r) if d not in collapsed and d not in obatch]
    offset = [int(d) for d in dn.offset_dims]
    if len(offset) != len(window_o):
        raise ValueError(
            f"gather: {len(offset)} offset_dims for {len(window_o)} operand "
            "window dimensions"
        )
    out_rank = len(batch_shape) + len(offset)
    batch_out = [d for d in range(out_rank) if d not in offset]
    out_shape = [0] * out_rank
    for od, wd in zip(offset, window_o):
        out_shape[od] = sizes[wd]
    for bd, n in zip(batch_out, batch_shape):
        out_shape[bd] = n
    out_shape = tuple(out_shape)
    dtype = np.dtype(x.dtype)
    n_out = math.prod(out_shape)
    if n_out == 0:
        return lax.full(out_shape, 0, dtype)
    m = GatherScatterMode.from_any(
        GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode
    )
    if m == GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather: mode ONE_HOT is not supported")

    def coords(dim: int) -> Any:
        return lax.iota(_I32, out_shape, dim)

    start = _window_starts(idx, out_shape, batch_out, k, to_operand, obatch, ibatch, r)
    inside = lax.full(out_shape, True, np.dtype(bool))
    for d in range(r):
        hi = o_shape[d] - sizes[d]
        if m == GatherScatterMode.FILL_OR_DROP:
            ok = lax.bitwise_and(lax.ge(start[d], 0), lax.le(start[d], hi))
            inside = lax.bitwise_and(inside, ok)
        else:  # CLIP, PROMISE_IN_BOUNDS: XLA clamps the start
            start[d] = lax.minimum(lax.maximum(start[d], 0), hi)
    window_of = dict(zip(window_o, offset))
    flat = lax.full(out_shape, 0, _I32)
    stride = 1
    for d in range(r - 1, -1, -1):
        pos = start[d]
        if d in window_of:
            pos = lax.add(pos, coords(window_of[d]))
        flat = lax.add(flat, lax.mul(pos, stride))
        stride *= o_shape[d]
    n_in = math.prod(o_shape)
    if n_in == 0:
        taken = lax.full(out_shape, 0, dtype)
    else:
        taken = lax.reshape(
            lax.take(lax.reshape(x, (n_in,)), lax.reshape(flat, (n_out,))),
            out_shape,
        )
    if m != GatherScatterMode.FILL_OR_DROP:
        return taken
    fill = lax.full(out_shape, _fill_value(dtype, fill_value), dtype)
    return lax.select(inside, taken, fill)


def gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: Any = None,
    slice_sizes: Any = None,
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: Any = None,
    fill_value: Any = None,
    axis: int | None = None,
) -> Any:
    """JAX's ``lax.gather``: slices of ``operand`` of ``slice_sizes``
    starting where ``start_indices`` (index vectors along their last
    dimension) say, arranged by ``dimension_numbers``
    (``GatherDimensionNumbers``). ``mode`` None (PROMISE_IN_BOUNDS) or
    'clip' clamps out-of-bounds starts; 'fill' gives those windows
    ``fill_value``. baton's shorthand ``gather(x, indices, axis=0)`` (an
    int third argument, or none) is numpy's take, out-of-range indices
    clamped.

    >>> dn = bt.lax.GatherDimensionNumbers(
    ...     offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    >>> bt.lax.gather(bnp.arange(5.0), bnp.array([[3], [9]]), dn, (1,),
    ...               mode="fill")
    Array([ 3., nan], dtype=float32)
    """
    del unique_indices, indices_are_sorted  # hints only
    if dimension_numbers is None or isinstance(dimension_numbers, (int, np.integer)):
        if slice_sizes is not None or mode is not None or fill_value is not None:
            raise TypeError(
                "gather: give dimension_numbers (GatherDimensionNumbers) with "
                "slice_sizes, or baton's gather(x, indices, axis)"
            )
        ax = axis if dimension_numbers is None else int(dimension_numbers)
        return lax.gather(operand, start_indices, 0 if ax is None else ax)
    if slice_sizes is None:
        raise TypeError("gather: slice_sizes is required with dimension_numbers")
    return _xla_gather(
        operand, start_indices, dimension_numbers, slice_sizes, mode, fill_value
    )


def scatter(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any = None,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
    axis: int | None = None,
) -> Any:
    """JAX's ``lax.scatter``: ``operand`` with the windows that
    ``dimension_numbers`` (``ScatterDimensionNumbers``) and
    ``scatter_indices`` select replaced by ``updates`` (of repeated
    indices one wins, unspecified which, as in JAX); out-of-bounds windows
    are dropped (``mode`` None or 'fill', FILL_OR_DROP) or clamped
    ('clip'). baton's shorthand ``scatter(x, indices, updates, axis=0,
    mode='set')`` (no dimension numbers; mode 'set', 'add', 'mul', 'min',
    'max') scatters whole slices along ``axis``.

    >>> dn = bt.lax.ScatterDimensionNumbers(
    ...     update_window_dims=(), inserted_window_dims=(0,),
    ...     scatter_dims_to_operand_dims=(0,))
    >>> bt.lax.scatter(bnp.zeros(4), bnp.array([[1], [3]]),
    ...                bnp.array([5.0, 7.0]), dn)
    Array([0., 5., 0., 7.], dtype=float32)
    """
    del indices_are_sorted, unique_indices  # hints only
    if dimension_numbers is None or isinstance(dimension_numbers, (int, np.integer)):
        ax = axis if dimension_numbers is None else int(dimension_numbers)
        return lax.scatter(
            operand,
            scatter_indices,
            updates,
            0 if ax is None else ax,
            "set" if mode is None else mode,
        )
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        dimension_numbers = ScatterDimensionNumbers(*dimension_numbers)
    return _scatter(operand, scatter_indices, updates, dimension_numbers, mode, "set")


__all__ = ["GatherDimensionNumbers", "gather", "scatter"]

# A class: bt.lax leaves it unwrapped. gather and scatter replace the
# C++ bindings of the same names (whose forms they keep).
NOT_OPERATIONS = frozenset({"GatherDimensionNumbers"})
OVERRIDES = frozenset({"gather", "scatter"})
