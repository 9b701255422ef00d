"""``bt.ds`` (JAX's ``jax.ds`` / ``dslice``): a slice whose start may be a
traced value, for indexing ``x[bt.ds(i, size)]`` inside ``bt.jit``.

``ds(start, size, stride)`` selects ``size`` elements ``start, start +
stride, ...``; ``ds(n)`` is ``:n`` (start 0), ``ds(None)`` is ``:``. As
in JAX the selection is a ``lax.dynamic_slice``: a start that would run
past the end is clamped so that ``size`` elements are taken, and a
negative start counts from the end. A key may mix ``ds`` with ints,
slices, ``None`` and ``...`` (not with integer or boolean arrays).
Reading only: ``x.at[bt.ds(...)]`` is not supported.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from baton.lax import dynamic_slice_in_dim

__all__ = ["Slice", "ds"]


@dataclass(frozen=True, eq=False)
class Slice:
    """``size`` elements from ``start`` (an int or a scalar array) every
    ``stride`` (a static int). Not a tuple, so that ``x[Slice(...)]`` is
    one index."""

    start: Any
    size: int
    stride: int = 1


def ds(start: Any, size: Any = None, stride: int | None = None) -> slice | Slice:
    """``Slice(start, size, stride)`` (``ds(n)``: ``Slice(0, n)``;
    ``ds(None)``: ``slice(None)``), usable as an index with a traced start."""
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, operator.index(size), stride)


def has_slice(key: Any) -> bool:
    """Whether an index key holds a :class:`Slice`."""
    if isinstance(key, Slice):
        return True
    return isinstance(key, tuple) and any(isinstance(k, Slice) for k in key)


def apply(x: Any, key: Any) -> tuple[Any, Any]:
    """``x`` cut to each :class:`Slice` of ``key`` (a dynamic slice), and
    the key with those entries replaced by plain strided slices."""
    entries = list(key) if isinstance(key, tuple) else [key]
    for e in entries:
        if not (e is None or e is Ellipsis or isinstance(e, (int, slice, Slice))):
            raise TypeError(
                "an index with bt.ds may also hold ints, slices, None and ..., not "
                f"{type(e).__name__}"
            )
    if sum(e is Ellipsis for e in entries) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for e in entries if e is not None and e is not Ellipsis)
    ndim = len(x.shape)
    if used > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {used} "
            "were indexed"
        )
    axis = 0
    out = []
    for e in entries:
        if e is Ellipsis:
            axis += ndim - used
            out.append(e)
            continue
        if e is None:
            out.append(e)
            continue
        if isinstance(e, Slice):
            if e.size < 0 or e.stride < 1:
                raise ValueError(f"bt.ds: size must be >= 0 and stride >= 1, got {e}")
            length = 0 if e.size == 0 else (e.size - 1) * e.stride + 1
            if length > x.shape[axis]:
                raise IndexError(
                    f"bt.ds: {e.size} elements every {e.stride} need {length} along "
                    f"axis {axis}, which has {x.shape[axis]}"
                )
            x = dynamic_slice_in_dim(x, e.start, length, axis=axis)
            out.append(slice(None, None, e.stride))
        else:
            out.append(e)
        axis += 1
    return x, tuple(out)
