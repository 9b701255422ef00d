"""``bt.ops``: JAX's ``jax.ops``: segment reductions.

``segment_sum(data, segment_ids, num_segments)`` reduces the rows of
``data`` (its leading axes, those ``segment_ids`` covers) that share a
segment id, as JAX does through a scatter into an array of
``num_segments`` rows filled with the reduction's identity (0, 1, the
dtype's lowest value for max, its highest for min; so an empty segment of
``segment_max`` is ``-inf`` for floats). Ids outside ``[0, num_segments)``
are dropped (JAX's default mode, "fill"/"drop"); ``mode="clip"`` clamps
them into range instead. ``num_segments=None`` takes ``max(segment_ids) +
1``, which needs concrete ids (not under ``bt.jit``), as in JAX.
``bucket_size`` reduces each run of ``bucket_size`` rows on its own and
then combines the buckets (JAX's numerics); ``indices_are_sorted`` and
``unique_indices`` are hints that change no result here.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from baton import numpy as bnp

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]

_MODES = (None, "fill", "drop", "clip", "promise_in_bounds")


def _identity(kind: str, dtype: np.dtype) -> Any:
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtype == np.bool_:
        return kind == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def _mode_name(mode: Any) -> Any:
    if mode is None or isinstance(mode, str):
        name = mode
    else:  # lax.GatherScatterMode-like enums
        name = getattr(mode, "name", str(mode)).lower()
    if name not in _MODES:
        raise ValueError(
            f"segment op: mode must be one of 'fill', 'drop', 'clip', "
            f"'promise_in_bounds' or None, not {mode!r}"
        )
    return name


def _segment(
    kind: str,
    data: Any,
    segment_ids: Any,
    num_segments: int | None,
    indices_are_sorted: bool,
    unique_indices: bool,
    bucket_size: int | None,
    mode: Any,
) -> Any:
    del indices_are_sorted, unique_indices  # hints only
    name = f"segment_{kind}"
    data = bnp.asarray(data)
    ids = bnp.asarray(segment_ids)
    if not bnp.issubdtype(ids.dtype, bnp.integer):
        raise TypeError(f"{name}: segment_ids must be integers, not {ids.dtype}")
    if ids.ndim > data.ndim or tuple(data.shape[: ids.ndim]) != tuple(ids.shape):
        raise ValueError(
            f"{name}: segment_ids of shape {tuple(ids.shape)} must match the "
            f"leading axes of data (shape {tuple(data.shape)})"
        )
    mode = _mode_name(mode)
    if num_segments is None:
        num_segments = int(bnp.max(ids)) + 1 if ids.size else 0
    try:
        n = operator.index(num_segments)
    except TypeError:
        raise TypeError(
            f"{name}: num_segments must be an int, not {type(num_segments).__name__}"
        ) from None
    if n < 0:
        raise ValueError(f"{name}: num_segments must be >= 0, not {n}")
    # Rows that belong to no segment go to an extra row n, dropped at the end.
    if mode == "clip":
        ids = bnp.clip(ids, 0, max(n - 1, 0))
    else:
        ids = bnp.where((ids >= 0) & (ids < n), ids, n)
    ids = ids.astype(bnp.int32)
    rows = n + 1
    buckets = 1
    if bucket_size is not None:
        b = operator.index(bucket_size)
        if b <= 0:
            raise ValueError(f"{name}: bucket_size must be positive, not {b}")
        flat = ids.reshape(-1)
        count = flat.shape[0]
        buckets = max(1, math.ceil(count / b))
        bucket_of = (bnp.arange(count, dtype=bnp.int32) // b).reshape(ids.shape)
        ids = ids + bucket_of * rows
    fill = _identity(kind, np.dtype(data.dtype))
    out = bnp.full((buckets * rows,) + tuple(data.shape[ids.ndim:]), fill, data.dtype)
    ref = out.at[ids]
    update: Callable[[Any], Any] = {
        "sum": ref.add, "prod": ref.multiply, "max": ref.max, "min": ref.min
    }[kind]
    out = update(data)
    out = out.reshape((buckets, rows) + tuple(data.shape[ids.ndim:]))[:, :n]
    if buckets == 1:
        return out[0]
    reduce = {"sum": bnp.sum, "prod": bnp.prod, "max": bnp.max, "min": bnp.min}[kind]
    return reduce(out, axis=0).astype(data.dtype)


def _make(kind: str, what: str) -> Callable[..., Any]:
    def fn(
        data: Any,
        segment_ids: Any,
        num_segments: int | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        bucket_size: int | None = None,
        mode: Any = None,
    ) -> Any:
        return _segment(
            kind, data, segment_ids, num_segments, indices_are_sorted,
            unique_indices, bucket_size, mode,
        )

    fn.__name__ = fn.__qualname__ = f"segment_{kind}"
    fn.__doc__ = (
        f"The {what} of the rows of ``data`` in each segment: row ``i`` of the "
        f"result is the {what} of ``data[j]`` over ``segment_ids[j] == i``, for "
        "``i < num_segments`` (see the module docstring for the identity of an "
        "empty segment, out-of-range ids, ``mode`` and ``bucket_size``)."
    )
    return fn


segment_sum = _make("sum", "sum")
segment_prod = _make("prod", "product")
segment_max = _make("max", "maximum")
segment_min = _make("min", "minimum")
