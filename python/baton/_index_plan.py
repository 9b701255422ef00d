"""Parsing an index key into a static plan (numpy's rules, from shapes only).

``parse(key, shape)`` validates a key the way numpy does (IndexError for
out-of-range static integers, too many indices, float or string indices;
slices clip; negative static indices wrap) and splits it into:

- a hashable *plan*: ``(shape, axes, b_shape, front, out_shape, out_axes)``
  where ``axes`` has one entry per indexed dimension -- ``("full",)``,
  ``("slice", value, size, step)``, ``("int", value)`` or
  ``("adv", value, "static" | "dynamic")`` -- ``b_shape`` is the broadcast
  shape of the advanced (integer array / traced) indices, ``front`` says
  whether numpy puts their dimensions first, and ``out_axes`` tells for
  each result dimension where it comes from (an axis, -1 for None, -2 for
  the advanced dimensions);
- the index *values* the plan's entries point at: slice starts and static
  integers (Python ints), numpy index arrays (checked and wrapped), and
  traced indices (Tracers, baton Arrays) left as they are.

Boolean numpy masks (and baton Array masks outside a trace) become their
``nonzero()`` index arrays; traced masks raise
``bt.errors.NonConcreteBooleanIndexError`` (an IndexError, as in JAX, and a
NotImplementedError).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton._baton import Array, lax

Tracer = lax.Tracer

__all__ = ["default_fill", "index_dtype", "index_mode", "parse", "static_int_array"]


def index_dtype(n: int) -> np.dtype:
    return np.dtype(np.int32) if n < 2**31 else np.dtype(np.int64)


def index_mode(i: Any, n: int, mode: str, *, clamp: bool = True) -> tuple[Any, Any]:
    """Traced indices into a dimension of size ``n`` as ``mode`` takes
    them (take, take_along_axis): 'wrap' wraps around; otherwise negatives
    wrap once and the rest clamp into range (``clamp=False`` leaves that to
    a gather, which clamps anyway). Returns them and, for 'fill', the
    in-range mask (else None), read from the indices as given so that it is
    not a second user of the wrapped ones and fuses into its consumer."""
    if i.dtype.itemsize < 4 or i.dtype.kind == "u":
        i = lax.astype(i, index_dtype(n) if i.dtype.itemsize < 8 else np.int64)
    if mode == "wrap":
        return lax.mod(i, max(n, 1)), None
    ok = None
    if mode == "fill":  # i + n >= 0 for the negatives, i < n for the rest
        ok = lax.bitwise_and(lax.ge(i, -n), lax.lt(i, n))
    i = lax.select(lax.lt(i, 0), lax.add(i, n), i)
    if clamp:
        i = lax.maximum(lax.minimum(i, max(n - 1, 0)), 0)
    return i, ok


def fill_bits(d: np.dtype, value: Any) -> int | None:
    """``value`` as one element of ``d``, its bytes read as a little-endian
    integer: ``lax.take``'s ``fill_bits``. None where the element is over
    8 bytes (complex128) or numpy cannot convert the value (an integer out
    of the dtype's range): the caller then selects the fill around the
    gather."""
    d = np.dtype(d)
    if d.itemsize > 8:
        return None
    try:
        element = np.array(value, dtype=d)
    except (OverflowError, ValueError, TypeError):
        return None
    return int.from_bytes(element.tobytes(), "little")


def default_fill(d: np.dtype) -> Any:
    """jax.numpy's fill for out-of-range reads: NaN (NaN + NaN j), True, or the most
    negative (signed) / largest (unsigned) integer."""
    if d.kind == "f" or d.name == "bfloat16":
        return float("nan")
    if d.kind == "c":
        return complex(float("nan"), float("nan"))
    if d == np.bool_:
        return True
    info = np.iinfo(d)
    return int(info.min) if d.kind == "i" else int(info.max)


def static_int_array(a: np.ndarray, n: int, axis: int) -> np.ndarray:
    """A numpy integer index array checked against numpy's rules and wrapped."""
    a = np.asarray(a)
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise IndexError(
                f"index {bad} is out of bounds for axis {axis} with size {n}"
            )
        a = np.where(a < 0, a + n, a)
    return np.ascontiguousarray(a.astype(index_dtype(n)))


def _is_int_scalar(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _non_integer(k: Any) -> IndexError:
    return IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None (`bnp.newaxis`) and "
        f"integer or boolean arrays are valid indices; got {k!r}"
    )


def _concrete_mask(k: Any) -> np.ndarray | None:
    """A boolean index as a numpy mask, or None if k is not boolean."""
    if isinstance(k, Tracer):
        if k.dtype == np.bool_:
            from baton.errors import NonConcreteBooleanIndexError

            raise NonConcreteBooleanIndexError(
                f"boolean mask indexing with a traced mask ({k!r}) is not "
                "supported: the result's shape would depend on the mask's "
                "values. Use bnp.where(mask, x, other) (or x.at[...] with integer "
                "indices) instead, or pass the mask as a static numpy array."
            )
        return None
    if isinstance(k, Array):
        if k.dtype != np.bool_:
            return None
        return np.asarray(k)  # concrete outside a trace: read its values
    if isinstance(k, (np.ndarray, list, tuple)) or isinstance(k, np.bool_):
        a = np.asarray(k)
        if a.dtype == np.bool_:
            return a
    return None


def _expand(key: Any, ndim: int) -> list[Any]:
    """The key as a list of entries, Ellipsis expanded to full slices and
    boolean masks split into their nonzero() index arrays (tagged)."""
    if not isinstance(key, tuple):
        key = (key,)
    entries: list[Any] = []
    consumed = 0
    ellipsis_at = None
    for k in key:
        if k is None:
            entries.append(None)
        elif k is Ellipsis:
            if ellipsis_at is not None:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis_at = len(entries)
            entries.append(Ellipsis)
        else:
            if isinstance(k, (bool, np.bool_)):
                raise NotImplementedError(
                    "indexing with a boolean scalar (x[True]) is not supported; "
                    "use x[None] (or bnp.expand_dims) instead"
                )
            mask = _concrete_mask(k)
            if mask is not None:
                if mask.ndim == 0:
                    raise NotImplementedError(
                        "indexing with a 0-d boolean mask is not supported"
                    )
                entries.append(("mask", mask))
                consumed += mask.ndim
            else:
                entries.append(k)
                consumed += 1
    if consumed > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but "
            f"{consumed} were indexed"
        )
    fill = [slice(None)] * (ndim - consumed)
    if ellipsis_at is None:
        entries.extend(fill)
    else:
        # An Ellipsis standing for no dimension still separates the advanced
        # indices around it (numpy: x[:, [0], ..., 0] puts them first).
        entries[ellipsis_at : ellipsis_at + 1] = fill or [_EMPTY_ELLIPSIS]
    return entries


_EMPTY_ELLIPSIS = object()  # an Ellipsis that expanded to no dimension


class _Parsed:
    """A key parsed against a shape: the plan (hashable) and the values."""

    __slots__ = ("has_adv", "out_shape", "plan", "values")


def parse(key: Any, shape: tuple[int, ...]) -> _Parsed:
    """Parses ``key`` for an array of ``shape``. Raises IndexError for what
    numpy rejects (out-of-range integers, too many indices, float indices)."""
    ndim = len(shape)
    entries = _expand(key, ndim)
    axes: list[tuple[Any, ...]] = []  # per consumed axis
    values: list[Any] = []
    # key order: ("none",) | ("ellipsis",) | ("axis", k) | ("group", k)
    layout: list[Any] = []
    adv_shapes: list[tuple[int, ...]] = []
    dim = 0
    for e in entries:
        if e is None:
            layout.append(("none",))
            continue
        if e is _EMPTY_ELLIPSIS:
            layout.append(("ellipsis",))
            continue
        if isinstance(e, tuple) and len(e) == 2 and e[0] == "mask":
            mask = e[1]
            sub = shape[dim : dim + mask.ndim]
            # numpy accepts a mask dimension of 0 along an axis of any size
            # (the mask selects nothing there).
            if len(sub) != mask.ndim or any(
                m != d and m != 0 for m, d in zip(mask.shape, sub)
            ):
                raise IndexError(
                    f"boolean index did not match indexed array along axis {dim}; "
                    f"size of axis is {shape[dim] if sub else 0} but size of "
                    f"corresponding boolean axis is {mask.shape[0]}"
                    if mask.ndim == 1
                    else f"boolean index of shape {mask.shape} does not match the "
                    f"indexed dimensions {tuple(sub)}"
                )
            for ix in np.nonzero(mask):
                n = shape[dim]
                axes.append(("adv", len(values), "static"))
                values.append(np.ascontiguousarray(ix.astype(index_dtype(n))))
                adv_shapes.append(ix.shape)
                layout.append(("group", dim))
                dim += 1
            continue
        n = shape[dim]
        if isinstance(e, slice):
            for part in (e.start, e.stop, e.step):
                if isinstance(part, (Tracer, Array)):
                    raise IndexError(
                        "slice bounds must be static Python ints (the result's "
                        "shape depends on them); for a window at a traced start "
                        "use bt.lax.dynamic_slice(x, starts, sizes)"
                    )
            try:
                start, stop, step = e.indices(n)
            except TypeError:
                raise _non_integer(e) from None
            size = len(range(start, stop, step))
            if size == n and step == 1:
                axes.append(("full",))
            else:
                low = start if step > 0 else start + (size - 1) * step
                if size == 0:
                    low = 0
                axes.append(("slice", len(values), size, step))
                values.append(low)
            layout.append(("axis", dim))
        elif _is_int_scalar(e):
            i = int(e)
            if not -n <= i < n:
                raise IndexError(
                    f"index {i} is out of bounds for axis {dim} with size {n}"
                )
            axes.append(("int", len(values)))
            values.append(i + n if i < 0 else i)
            layout.append(("group", dim))
        elif isinstance(e, (Tracer, Array)):
            if e.dtype.kind not in "iu":
                raise _non_integer(e)
            axes.append(("adv", len(values), "dynamic"))
            values.append(e)
            adv_shapes.append(tuple(e.shape))
            layout.append(("group", dim))
        else:
            if isinstance(e, (float, complex, str, bytes, slice)) or e is Ellipsis:
                raise _non_integer(e)
            try:
                a = np.asarray(e)
            except (ValueError, TypeError):
                raise _non_integer(e) from None
            if a.dtype.kind not in "iu":
                if a.size == 0 and a.dtype.kind == "f":  # x[[]]
                    a = a.astype(np.int32)
                else:
                    raise _non_integer(e)
            axes.append(("adv", len(values), "static"))
            values.append(static_int_array(a, n, dim))
            adv_shapes.append(a.shape)
            layout.append(("group", dim))
        dim += 1
    p = _Parsed()
    p.has_adv = bool(adv_shapes)
    try:
        b_shape = tuple(np.broadcast_shapes(*adv_shapes)) if adv_shapes else ()
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing arrays could not be broadcast together with "
            f"shapes {' '.join(str(tuple(s)) for s in adv_shapes)}"
        ) from None
    # Without advanced indices, integers are basic: they drop their dims.
    # Where the advanced dimensions go (numpy): in place of the group when
    # its entries are adjacent in the key, else first.
    group_pos = [i for i, t in enumerate(layout) if t[0] == "group"]
    adjacent = bool(group_pos) and group_pos[-1] - group_pos[0] + 1 == len(group_pos)
    out: list[int] = []
    out_axes: list[int] = []  # per result dim: consumed axis, -1 None, -2 B
    front = p.has_adv and not adjacent
    if front:
        out.extend(b_shape)
        out_axes.extend([-2] * len(b_shape))
    placed = front
    for t in layout:
        if t[0] == "none":
            out.append(1)
            out_axes.append(-1)
        elif t[0] == "axis":
            sp = axes[t[1]]
            out.append(shape[t[1]] if sp[0] == "full" else sp[2])
            out_axes.append(t[1])
        elif t[0] == "group" and p.has_adv and not placed:
            out.extend(b_shape)
            out_axes.extend([-2] * len(b_shape))
            placed = True
    p.out_shape = tuple(out)
    p.plan = (tuple(shape), tuple(axes), b_shape, front, p.out_shape, tuple(out_axes))
    p.values = values
    return p
