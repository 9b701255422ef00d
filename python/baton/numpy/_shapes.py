"""Reshaping, joining, splitting and take of ``baton.numpy``.

Shapes are static: every shape argument is a Python int or tuple, checked
here (with numpy's messages) before anything is traced or compiled.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from baton import _index_plan, _indexing, _ops
from baton._baton import Array, lax
from baton.numpy._creation import asarray

Tracer = lax.Tracer

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "concatenate",
    "expand_dims",
    "flip",
    "hstack",
    "moveaxis",
    "ndim",
    "pad",
    "ravel",
    "reshape",
    "shape",
    "size",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "take",
    "transpose",
    "tril",
    "triu",
    "vstack",
]


def ndim(a: Any) -> int:
    return len(_ops.shape_of(a))


def shape(a: Any) -> tuple[int, ...]:
    return _ops.shape_of(a)


def size(a: Any) -> int:
    return int(np.prod(_ops.shape_of(a), dtype=np.int64))


def _ints(seq: Any, what: str) -> tuple[int, ...]:
    if isinstance(seq, (int, np.integer)):
        return (operator.index(seq),)
    try:
        return tuple(operator.index(d) for d in seq)
    except TypeError:
        raise TypeError(
            f"{what} must be an int or a sequence of ints, not {seq!r}"
        ) from None


def _new_shape(old: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's reshape rule, -1 inferred; ValueError otherwise."""
    n = int(np.prod(old, dtype=np.int64))
    if new.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension (-1)")
    if any(d < -1 for d in new):
        raise ValueError(f"negative dimensions not allowed: {new}")
    if -1 in new:
        known = int(np.prod([d for d in new if d != -1], dtype=np.int64))
        if known == 0 or n % known:
            raise ValueError(f"cannot reshape array of size {n} into shape {new}")
        new = tuple(n // known if d == -1 else d for d in new)
    if int(np.prod(new, dtype=np.int64)) != n:
        raise ValueError(f"cannot reshape array of size {n} into shape {new}")
    return new


def _reshape(a: Any, *, shape: tuple[int, ...]) -> Any:
    t = _ops.as_tracer(a)
    return t if tuple(t.shape) == shape else lax.reshape(t, shape)


def reshape(
    a: Any, newshape: Any = None, order: str = "C", *, shape: Any = None
) -> Any:
    """The same elements in row-major order in a new shape (one -1 allowed)."""
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    target = shape if shape is not None else newshape
    if target is None:
        raise TypeError("reshape: a new shape is required")
    new = _new_shape(_ops.shape_of(a), _ints(target, "shape"))
    if isinstance(a, Array) and tuple(a.shape) == new:
        return _ops.unchanged(a)
    return _ops.apply(_reshape, (a,), (("shape", new),))


def ravel(a: Any, order: str = "C") -> Any:
    """The elements as a 1-D array (row-major)."""
    return reshape(a, (-1,), order)


def _transpose(a: Any, *, axes: tuple[int, ...]) -> Any:
    return lax.transpose(_ops.as_tracer(a), axes)


def transpose(a: Any, axes: Any = None) -> Any:
    """Dimensions permuted (reversed by default)."""
    nd = ndim(a)
    if axes is None:
        perm = tuple(range(nd))[::-1]
    else:
        perm = tuple(_ops.normalize_axis(ax, nd) for ax in _ints(axes, "axes"))
        if sorted(perm) != list(range(nd)):
            raise ValueError(f"axes {tuple(axes)} don't match array of {nd} dimensions")
    if perm == tuple(range(nd)):
        return asarray_like(a)
    return _ops.apply(_transpose, (a,), (("axes", perm),))


def asarray_like(a: Any) -> Any:
    """a as a baton Array (or Tracer) without changing it."""
    if isinstance(a, (Array, Tracer)):
        return _ops.unchanged(a)
    return asarray(a)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Two dimensions exchanged."""
    nd = ndim(a)
    i, j = _ops.normalize_axis(axis1, nd), _ops.normalize_axis(axis2, nd)
    perm = list(range(nd))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Dimensions moved to new positions, the others keeping their order."""
    nd = ndim(a)
    src = [_ops.normalize_axis(s, nd, "source") for s in _ints(source, "source")]
    dst = [
        _ops.normalize_axis(d, nd, "destination")
        for d in _ints(destination, "destination")
    ]
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [k for k in range(nd) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a: Any, axis: Any) -> Any:
    """Size-1 dimensions inserted at ``axis`` (an int or a tuple)."""
    old = _ops.shape_of(a)
    axes = _ints(axis, "axis")
    nd = len(old) + len(axes)
    pos = sorted(_ops.normalize_axis(ax, nd) for ax in axes)
    if len(set(pos)) != len(pos):
        raise ValueError(f"repeated axis in {axes}")
    new = list(old)
    for p in pos:
        new.insert(p, 1)
    return reshape(a, tuple(new))


def squeeze(a: Any, axis: Any = None) -> Any:
    """Size-1 dimensions removed (all of them, or those in ``axis``)."""
    old = _ops.shape_of(a)
    if axis is None:
        new = tuple(d for d in old if d != 1)
    else:
        axes = {_ops.normalize_axis(ax, len(old)) for ax in _ints(axis, "axis")}
        for ax in axes:
            if old[ax] != 1:
                raise ValueError(
                    "cannot select an axis to squeeze out which has size not equal to "
                    f"one (axis {ax} has size {old[ax]})"
                )
        new = tuple(d for k, d in enumerate(old) if k not in axes)
    return reshape(a, new)


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """numpy's broadcast_shapes; shapes that do not broadcast raise
    ValueError ("Incompatible shapes for broadcasting", as in JAX)."""
    ints = [_ints(s, "shape") for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*ints))
    except ValueError:
        raise ValueError(
            f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in ints]}; "
            "they cannot be broadcast together (each dimension must be equal, 1, "
            "or missing, counting from the last)"
        ) from None


def _broadcast_to(a: Any, *, shape: tuple[int, ...]) -> Any:
    t = _ops.as_tracer(a)
    return t if tuple(t.shape) == shape else lax.broadcast_to(t, shape)


def broadcast_to(array: Any, shape: Any) -> Any:
    """``array`` broadcast to ``shape`` (numpy's rules)."""
    target = _ints(shape, "shape")
    old = _ops.shape_of(array)
    # numpy's rule, checked here rather than by np.broadcast_shapes, which
    # also refuses shapes too large for numpy: those reach baton's one size
    # check (Shape::Check), which says so.
    ok = len(old) <= len(target) and all(
        o == 1 or o == t for o, t in zip(old[::-1], target[::-1])
    )
    if not ok:
        raise ValueError(f"cannot broadcast an array of shape {old} to shape {target}")
    return _ops.apply(_broadcast_to, (array,), (("shape", target),))


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arrays broadcast to their common shape."""
    s = broadcast_shapes(*(_ops.shape_of(a) for a in args))
    return [broadcast_to(a, s) for a in args]


def atleast_1d(*arys: Any) -> Any:
    """Each argument as an array (sequences converted, as jnp does) with at
    least 1 dimension."""
    arys = [asarray_like(a) for a in arys]
    out = [_ops.unchanged(a) if ndim(a) >= 1 else reshape(a, (1,)) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: Any) -> Any:
    """Each argument as an array (sequences converted) with at least 2
    dimensions: 0-d -> (1, 1), (N,) -> (1, N)."""
    out = []
    for a in arys:
        a = asarray_like(a)
        s = _ops.shape_of(a)
        out.append(
            _ops.unchanged(a) if len(s) >= 2 else reshape(a, (1,) * (2 - len(s)) + s)
        )
    return out[0] if len(out) == 1 else out


# ---- joining ----


def _concatenate(*arrays: Any, axis: int) -> Any:
    return lax.concatenate(list(arrays), axis)


def _operands(arrays: Any, what: str) -> list[Any]:
    if isinstance(arrays, (Array, Tracer, np.ndarray)):
        return (
            [arrays[i] for i in range(len(arrays))]
            if not isinstance(arrays, np.ndarray)
            else list(arrays)
        )
    try:
        ops = list(arrays)
    except TypeError:
        raise TypeError(f"{what}: expected a sequence of arrays") from None
    if not ops:
        raise ValueError("need at least one array to concatenate")
    return ops


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    """The arrays joined along an existing axis (None: flattened first);
    they promote to a common dtype."""
    ops = _operands(arrays, "concatenate")
    if axis is None:
        ops = [ravel(a) for a in ops]
        axis = 0
    shapes = [_ops.shape_of(a) for a in ops]
    nd = len(shapes[0])
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = _ops.normalize_axis(axis, nd)
    for s in shapes[1:]:
        if len(s) != nd:
            raise ValueError(
                "all the input array dimensions except for the concatenation axis "
                f"must match exactly; got shapes {shapes}"
            )
        if any(s[k] != shapes[0][k] for k in range(nd) if k != ax):
            raise ValueError(
                "all the input array dimensions except for the concatenation axis "
                f"must match exactly; got shapes {shapes}"
            )
    out = _ops.apply(_concatenate, tuple(ops), (("axis", ax),))
    if dtype is not None:
        out = out.astype(dtype)
    return out


def stack(arrays: Sequence[Any], axis: int = 0, dtype: Any = None) -> Any:
    """The arrays (all of one shape) joined along a new axis."""
    ops = _operands(arrays, "stack")
    shapes = {_ops.shape_of(a) for a in ops}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    nd = len(next(iter(shapes))) + 1
    ax = _ops.normalize_axis(axis, nd)
    return concatenate([expand_dims(a, ax) for a in ops], ax, dtype)


def vstack(tup: Sequence[Any]) -> Any:
    return concatenate([atleast_2d(a) for a in tup], 0)


def hstack(tup: Sequence[Any]) -> Any:
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if ndim(arrs[0]) == 1 else 1)


def _split(a: Any, *, bounds: tuple[tuple[int, int], ...], axis: int) -> Any:
    t = _ops.as_tracer(a)
    out = []
    for lo, hi in bounds:
        start = [0] * t.ndim
        limit = list(t.shape)
        start[axis], limit[axis] = lo, hi
        out.append(lax.slice(t, start, limit))
    return tuple(out)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Sub-arrays along ``axis``: N equal sections or split at indices (one
    compiled program for all pieces)."""
    s = _ops.shape_of(ary)
    ax = _ops.normalize_axis(axis, len(s))
    n = s[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError("array split does not result in an equal division")
        cuts = [n // k * i for i in range(1, k)]
    else:
        cuts = list(_ints(indices_or_sections, "indices"))
    edges = [0] + [min(max(c + n if c < 0 else c, 0), n) for c in cuts] + [n]
    bounds = tuple((lo, max(lo, hi)) for lo, hi in zip(edges[:-1], edges[1:]))
    return list(_ops.apply(_split, (ary,), (("bounds", bounds), ("axis", ax))))


# ---- take, flip, pad, triangles ----


def _take(a: Any, idx: Any, *, axis: int, mode: str, fill: Any) -> Any:
    t = _ops.as_tracer(a)
    i = _ops.as_tracer(idx)
    n = t.shape[axis]
    shape = (*t.shape[:axis], *i.shape, *t.shape[axis + 1 :])
    value = _index_plan.default_fill(np.dtype(t.dtype)) if fill is None else fill
    if n == 0:  # nothing to read: every index is out of range
        return lax.full(shape, value if mode == "fill" else 0, t.dtype)
    if mode == "clip":
        return lax.take(t, i, axis)  # lax.take clamps
    # 'raise' with traced indices cannot raise: negatives wrap, then clamp.
    # 'fill': negatives wrap, the rest out of range read the fill. The
    # gather does either in its one pass over the indices.
    bits = _index_plan.fill_bits(t.dtype, value) if mode == "fill" else None
    if mode == "raise" or bits is not None:
        return lax.take(t, i, axis, wrap_negative=True, fill_bits=bits)
    i, ok = _index_plan.index_mode(i, n, mode, clamp=False)
    got = lax.take(t, i, axis)
    if ok is None:
        return got
    if ok.shape != shape:  # else the mask fuses into the select
        ok = lax.broadcast_in_dim(ok, shape, list(range(axis, axis + len(i.shape))))
    return lax.select(ok, got, lax.full((), value, t.dtype))


def take(
    a: Any,
    indices: Any,
    axis: int | None = None,
    out: None = None,
    mode: str | None = None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value: Any = None,
) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (None: of the
    flattened array), as ``jax.numpy.take``: negative indices count from the
    end; by default (``mode=None`` or ``'fill'``) an index out of range reads
    ``fill_value`` (default NaN for floats, the most negative / largest
    integer, True for bool). ``mode='clip'`` clamps, ``mode='wrap'`` wraps
    around, and ``mode='raise'`` raises IndexError for out-of-range static
    indices (numpy's behaviour; traced ones clamp)."""
    del unique_indices, indices_are_sorted  # hints for XLA; nothing to do
    if out is not None:
        raise NotImplementedError("take: out= is not supported (arrays are immutable)")
    if mode not in (None, "raise", "clip", "wrap", "fill"):
        raise ValueError(f"take: unknown mode {mode!r}")
    if fill_value is not None and not _ops.is_scalar(fill_value):
        raise ValueError("take: fill_value must be a scalar")
    if axis is None:
        a = ravel(a)
        axis = 0
    s = _ops.shape_of(a)
    ax = _ops.normalize_axis(axis, len(s))
    mode = mode or "fill"
    n = s[ax]
    if not isinstance(indices, (Array, Tracer)):
        idx = np.asarray(indices)
        if idx.dtype.kind not in "iu":
            if idx.size == 0:
                idx = idx.astype(np.int32)
            else:
                raise IndexError(f"take: indices must be integers, not {idx.dtype}")
        if mode == "raise":
            indices, mode = _index_plan.static_int_array(idx, n, ax), "clip"
        elif mode == "clip":
            indices = np.clip(idx, 0, max(n - 1, 0)).astype(np.int32)
        elif mode == "fill" and idx.size and n and ((idx >= -n) & (idx < n)).all():
            # All in range (the common case): no mask to apply.
            indices = np.where(idx < 0, idx + n, idx).astype(np.int32)
            mode = "clip"
        else:
            indices = idx.astype(np.int64 if idx.dtype == np.int64 else np.int32)
    elif indices.dtype.kind not in "iu":
        raise IndexError(f"take: indices must be integers, not {indices.dtype}")
    return _ops.apply(
        _take,
        (a, indices),
        (("axis", ax), ("mode", mode), ("fill", fill_value)),
        weak_ref=(0,),
    )


def flip(m: Any, axis: Any = None) -> Any:
    """The elements in reversed order along ``axis`` (None: all)."""
    s = _ops.shape_of(m)
    axes = range(len(s)) if axis is None else _ops.normalize_axes(axis, len(s))
    key = tuple(
        slice(None, None, -1) if k in axes else slice(None) for k in range(len(s))
    )
    return _indexing.getitem(asarray_like(m), key)


def _pad(a: Any, value: Any, *, low: tuple[int, ...], high: tuple[int, ...]) -> Any:
    t = _ops.as_tracer(a)
    return lax.pad(t, value, list(low), list(high))


def pad(
    array: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0
) -> Any:
    """Constant padding (numpy's pad with mode='constant')."""
    if mode != "constant":
        raise NotImplementedError(
            f"pad: only mode='constant' is supported, not {mode!r}"
        )
    nd = ndim(array)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (nd, 2))
    if (pw < 0).any():
        raise ValueError("pad: negative pad widths are not allowed")
    if np.ndim(constant_values) != 0:
        raise NotImplementedError("pad: only a scalar constant_values is supported")
    low = tuple(int(v) for v in pw[:, 0])
    high = tuple(int(v) for v in pw[:, 1])
    return _ops.apply(
        _pad, (array, constant_values), (("low", low), ("high", high)), weak_ref=(0,)
    )


def _tri(m: Any, *, k: int, lower: bool) -> Any:
    t = _ops.as_tracer(m)
    r, c = t.ndim - 2, t.ndim - 1
    rows = lax.iota(np.int32, tuple(t.shape), r)
    cols = lax.iota(np.int32, tuple(t.shape), c)
    keep = lax.ge(lax.add(rows, k), cols) if lower else lax.le(lax.add(rows, k), cols)
    return lax.select(keep, t, lax.full((), 0, t.dtype))


def tril(m: Any, k: int = 0) -> Any:
    """The lower triangle (elements above the k-th diagonal zeroed)."""
    if ndim(m) < 2:
        raise ValueError("tril: the input must have at least 2 dimensions")
    return _ops.apply(_tri, (m,), (("k", int(k)), ("lower", True)))


def triu(m: Any, k: int = 0) -> Any:
    """The upper triangle (elements below the k-th diagonal zeroed)."""
    if ndim(m) < 2:
        raise ValueError("triu: the input must have at least 2 dimensions")
    return _ops.apply(_tri, (m,), (("k", int(k)), ("lower", False)))
