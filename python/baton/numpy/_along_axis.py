"""Along one axis, in ``baton.numpy``: take_along_axis / put_along_axis
and apply_along_axis / apply_over_axes.

As with ``take``, static (numpy / list) indices follow numpy (out of range
raises IndexError) and traced ones follow JAX (negative ones wrap, then
reads clamp -- or fill with ``mode="fill"`` -- and updates are dropped).
``put_along_axis`` needs ``inplace=False``, as in JAX, and returns the
updated array.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from baton import _index_plan, _ops
from baton._baton import Array, lax
from baton.numpy import _shapes as _sh
from baton.numpy._selection import (
    _check_int_tracer,
    _concrete,
    _inplace,
    _int_indices,
    _run,
)

Tracer = lax.Tracer
_BOOL = np.dtype(np.bool_)

__all__ = [
    "apply_along_axis",
    "apply_over_axes",
    "put_along_axis",
    "take_along_axis",
]


# ---- take / put along an axis ----


def _along_shape(
    fn: str, s: tuple[int, ...], si: tuple[int, ...], ax: int
) -> tuple[int, ...]:
    if len(si) != len(s):
        raise ValueError(
            f"{fn}: indices and arr must have the same number of dimensions; got "
            f"indices of shape {si} for arr of shape {s}"
        )
    out = []
    for d, (p, q) in enumerate(zip(s, si)):
        if d == ax:
            out.append(q)
        elif p == q or p == 1 or q == 1:
            out.append(q if p == 1 else p)
        else:
            raise ValueError(
                f"{fn}: indices of shape {si} do not broadcast against arr of shape "
                f"{s} (outside axis {ax})"
            )
    return tuple(out)


def _flat_index(s: tuple[int, ...], out: tuple[int, ...], ax: int, i: Any) -> Any:
    """The index into the flattened arr of element ``out``-position with
    i (an int Tracer of shape ``out``) along ax."""
    dt = _index_plan.index_dtype(int(np.prod(s, dtype=np.int64)))
    lin = None
    stride = 1
    for d in range(len(s) - 1, -1, -1):
        if d == ax:
            c = lax.astype(i, dt)
        elif s[d] == 1:
            c = None
        else:
            c = lax.iota(dt, out, d)
        if c is not None:
            term = c if stride == 1 else lax.mul(c, stride)
            lin = term if lin is None else lax.add(lin, term)
        stride *= s[d]
    return lax.full(out, 0, dt) if lin is None else lin


def _take_along(
    a: Any, i: Any, *, axis: int, out: tuple[int, ...], mode: str, fill: Any
) -> Any:
    t = _ops.as_tracer(a)
    s = tuple(t.shape)
    it = lax.broadcast_to(_ops.as_tracer(i), out)
    if t.size == 0:
        return lax.full(out, 0 if fill is None else fill, t.dtype)
    it, ok = _index_plan.index_mode(it, s[axis], mode)
    got = lax.take(lax.reshape(t, (-1,)), _flat_index(s, out, axis, it), 0)
    if ok is not None:
        v = _index_plan.default_fill(np.dtype(t.dtype)) if fill is None else fill
        got = lax.select(ok, got, lax.full((), v, t.dtype))
    return got


def _prep_indices(
    fn: str, indices: Any, n: int, ax: int, mode: str | None
) -> tuple[Any, str]:
    """Static indices checked (numpy's IndexError) or traced ones kept;
    and the mode the implementation uses."""
    if mode not in (None, "clip", "wrap", "fill", "drop", "promise_in_bounds"):
        raise ValueError(f"{fn}: unknown mode {mode!r}")
    if isinstance(indices, (Array, Tracer)):
        _check_int_tracer(indices, fn, "indices")
        return indices, ("clip" if mode in (None, "promise_in_bounds") else mode)
    idx = _int_indices(_ops.host_array(indices), fn, "indices")
    if mode in (None, "promise_in_bounds"):
        return _index_plan.static_int_array(idx, n, ax), "clip"
    return idx, mode


def take_along_axis(
    arr: Any,
    indices: Any,
    axis: int | None = -1,
    mode: str | None = None,
    fill_value: Any = None,
) -> Any:
    """Elements of ``arr`` picked along ``axis`` by ``indices`` (same ndim;
    the other axes broadcast), e.g. with the result of an argsort. As
    ``jax.numpy``: negative indices count from the end, and by default
    (``mode=None`` or ``'fill'``) an out-of-range index reads ``fill_value``
    (default NaN, the most negative / largest integer, True); mode='clip'
    clamps, mode='wrap' wraps around, and mode='promise_in_bounds' raises
    IndexError for out-of-range static indices (traced ones clamp).

    >>> bnp.take_along_axis(bnp.array([[3, 1], [5, 4]]), bnp.array([[1], [0]]), 1)
    """
    if axis is None:
        if _sh.ndim(indices) != 1:
            raise ValueError(
                "take_along_axis: indices must be 1-D when axis=None, got shape "
                f"{_ops.shape_of(indices)}"
            )
        arr, axis = _sh.ravel(arr), 0
    s = _ops.shape_of(arr)
    ax = _ops.normalize_axis(axis, len(s))
    out = _along_shape("take_along_axis", s, _ops.shape_of(indices), ax)
    idx, mode = _prep_indices("take_along_axis", indices, s[ax], ax, mode or "fill")
    if mode == "drop":
        mode = "fill"
    if fill_value is not None and not _ops.is_scalar(fill_value):
        fill_value = _concrete(fill_value, "take_along_axis", "fill_value").item()
    return _run(
        _take_along,
        (arr, idx),
        weak_ref=(0,),
        axis=ax,
        out=out,
        mode=mode,
        fill=fill_value,
    )


def _put_along(
    a: Any, i: Any, v: Any, *, axis: int, out: tuple[int, ...], mode: str
) -> Any:
    t = _ops.as_tracer(a)
    s = tuple(t.shape)
    it = lax.broadcast_to(_ops.as_tracer(i), out)
    vals = lax.broadcast_to(_ops.as_tracer(v, np.dtype(t.dtype)), out)
    n = s[axis]
    it, ok = _index_plan.index_mode(it, n, "fill" if mode == "drop" else mode)
    flat = _flat_index(s, out, axis, it)
    if ok is not None:  # drop: out-of-range indices made out of range overall
        flat = lax.select(ok, flat, int(np.prod(s, dtype=np.int64)))
    res = lax.scatter(
        lax.reshape(t, (-1,)),
        lax.reshape(flat, (-1,)),
        lax.reshape(vals, (-1,)),
        0,
        "set",
    )
    return lax.reshape(res, s)


def put_along_axis(
    arr: Any,
    indices: Any,
    values: Any,
    axis: int | None,
    inplace: bool = True,
    *,
    mode: str | None = None,
) -> Any:
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the
    inverse of ``take_along_axis``). Needs inplace=False (arrays are
    immutable). Traced out-of-range indices are dropped ('clip': clamped).

    >>> i = bnp.array([[1], [0]])
    >>> bnp.put_along_axis(bnp.zeros((2, 2)), i, 5.0, 1, inplace=False)
    """
    _inplace("put_along_axis", inplace)
    shape0 = _ops.shape_of(arr)
    if axis is None:
        if _sh.ndim(indices) != 1:
            raise ValueError(
                "put_along_axis: indices must be 1-D when axis=None, got shape "
                f"{_ops.shape_of(indices)}"
            )
        arr, axis = _sh.ravel(arr), 0
    s = _ops.shape_of(arr)
    ax = _ops.normalize_axis(axis, len(s))
    out = _along_shape("put_along_axis", s, _ops.shape_of(indices), ax)
    idx, how = _prep_indices("put_along_axis", indices, s[ax], ax, mode)
    if mode in (None, "fill", "drop") and isinstance(indices, (Array, Tracer)):
        how = "drop"
    elif how in ("fill", "drop"):
        how = "drop"
    vs = _ops.shape_of(values)
    try:
        if np.broadcast_shapes(vs, out) != out:
            raise ValueError
    except ValueError:
        raise ValueError(
            f"put_along_axis: values of shape {vs} do not broadcast to the indexed "
            f"shape {out}"
        ) from None
    res = _run(
        _put_along, (arr, idx, values), weak_ref=(0,), axis=ax, out=out, mode=how
    )
    return _sh.reshape(res, shape0)


# ---- apply_along_axis, apply_over_axes ----


def apply_along_axis(
    func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any
) -> Any:
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis``
    (through ``bt.vmap``); its result's dimensions replace that axis.

    >>> bnp.apply_along_axis(lambda v: v.sum(), 1, bnp.ones((2, 3)))    # [3. 3.]
    """
    from baton._vmap import vmap

    nd = _sh.ndim(arr)
    ax = _ops.normalize_axis(axis, nd)
    x = _sh.moveaxis(arr, ax, -1)

    def one(v: Any) -> Any:
        return func1d(v, *args, **kwargs)

    f = one
    for _ in range(nd - 1):
        f = vmap(f)
    out = f(x)
    r = _sh.ndim(out) - (nd - 1)
    perm = list(range(ax)) + list(range(nd - 1, nd - 1 + r)) + list(range(ax, nd - 1))
    return _sh.transpose(out, perm)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Any) -> Any:
    """``func(a, axis)`` applied for each axis in turn, each result keeping
    the number of dimensions (a reduced axis is put back with size 1).

    >>> bnp.apply_over_axes(bnp.sum, bnp.ones((2, 3, 4)), [0, 2]).shape    # (1, 3, 1)
    """
    val = _sh.asarray_like(a)
    nd = _sh.ndim(val)
    for ax in _sh._ints(axes, "axes"):
        ax = _ops.normalize_axis(ax, nd)
        res = func(val, ax)
        if _sh.ndim(res) != nd:
            res = _sh.expand_dims(res, ax)
            if _sh.ndim(res) != nd:
                raise ValueError(
                    f"apply_over_axes: func must return an array of {nd} or {nd - 1} "
                    f"dimensions, got {_sh.ndim(res) - 1}"
                )
        val = res
    return val
