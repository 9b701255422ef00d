"""``x[key]`` and ``x.at[key].set/add/multiply/min/max(v)``.

Static indices (Python ints, slices, lists, numpy arrays, numpy boolean
masks) follow numpy: an out-of-range integer raises IndexError, slices clip,
negative indices wrap. Traced indices (Tracers, and baton Arrays, whose
values are not looked at) follow JAX: negative ones wrap, then reads clamp
and out-of-range updates are dropped. For add, multiply, min and max,
repeated indices accumulate; for set one of them wins.

A key is parsed (``_index_plan.parse``, from the shapes only) into a hashable *plan*
plus the index values. The plan is the static part of an eager op's cache
key; the values are passed as arguments, so ``x[i]`` compiles once for all
in-range ``i`` of one shape. The implementation, on Tracers:

1. one block is cut out for the slices and integers (``slice`` /
   ``dynamic_slice``; integers keep a size-1 dimension), strided slices take
   every step-th element and negative steps reverse;
2. the advanced indices (integer arrays and traced scalars) gather along
   their axis (``take``); several of them are combined into one index over
   the merged axes;
3. a reshape (and, when numpy puts the advanced dimensions first, a
   transpose) gives numpy's result layout.

An update runs the same steps backwards: the value is broadcast to the
result's shape and brought to the block's layout, combined with ``scatter``
(advanced indices: accumulation and dropping come from it) or elementwise
(slices), and the block is written back with ``dynamic_update_slice``. A
plain ``x.at[i].set(v)``, ``x.at[:].add(v)`` or an update at traced indices
is a single in-place-capable op (scatter, dynamic_update_slice or
elementwise), so inside ``jit`` with the operand dead (donated) it writes
into x's buffer.

Not supported (NotImplementedError): boolean masks that are traced (their
result shape depends on values; ``bt.errors.NonConcreteBooleanIndexError``,
also an IndexError as in JAX), boolean scalars as indices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton._index_plan import index_dtype as _index_dtype
from baton._index_plan import parse

Tracer = lax.Tracer

MODES = ("set", "add", "mul", "min", "max")


# ---- implementation (on Tracers) ----


def wrap_index(i: Any, n: int) -> Any:
    """Negative traced indices wrap once (JAX)."""
    if i.dtype.kind == "u":
        d = _index_dtype(n) if i.dtype.itemsize < 4 else np.dtype(np.int64)
        return lax.astype(i, d)
    if i.dtype != _index_dtype(n) and i.dtype.itemsize < _index_dtype(n).itemsize:
        i = lax.astype(i, _index_dtype(n))
    return lax.select(lax.lt(i, 0), lax.add(i, n), i)


def _prepare_indices(plan: Any, values: list[Any], for_update: bool) -> list[Any]:
    """The advanced index Tracers of the plan: wrapped, broadcast to the
    common shape and -- with several -- combined into one flat index over
    the merged axes (clamped per axis for reads; out-of-range entries made
    out of range overall for updates, so they are dropped)."""
    shape, axes, b_shape, _, _, _ = plan
    adv = [(k, ax) for k, ax in enumerate(axes) if ax[0] == "adv"]
    idx = []
    for k, ax in adv:
        v = values[ax[1]]
        t = _ops.as_tracer(v)
        if ax[2] == "dynamic":
            t = wrap_index(t, shape[k])
        idx.append(t)
    if len(idx) == 1:
        return idx
    d = np.dtype(np.int64) if any(i.dtype == np.int64 for i in idx) else None
    if d is None:
        total = int(np.prod([shape[k] for k, _ in adv]))
        d = _index_dtype(total)
    idx = [lax.broadcast_to(lax.astype(i, d), b_shape) for i in idx]
    flat = None
    oob = None
    stride = 1
    for (k, ax), i in reversed(list(zip(adv, idx))):
        n = shape[k]
        if ax[2] == "dynamic":
            if for_update:
                bad = lax.bitwise_or(lax.lt(i, 0), lax.ge(i, n))
                oob = bad if oob is None else lax.bitwise_or(oob, bad)
            else:
                i = lax.minimum(lax.maximum(i, 0), n - 1)
        term = i if stride == 1 else lax.mul(i, stride)
        flat = term if flat is None else lax.add(flat, term)
        stride *= n
    if oob is not None:
        flat = lax.select(oob, lax.full(b_shape, stride, d), flat)
    return [flat]


def _block(
    x: Any, plan: Any, values: list[Any], keep: int | None = None
) -> tuple[Any, list[Any] | None]:
    """x cut to the slices and integers (dimensions kept; axis ``keep``
    left whole); the starts, or None when nothing is cut."""
    shape, axes, _, _, _, _ = plan
    cut = [ax[0] in ("slice", "int") and k != keep for k, ax in enumerate(axes)]
    if not any(cut):
        return x, None
    starts: list[Any] = []
    sizes: list[int] = []
    for k, ax in enumerate(axes):
        if not cut[k]:
            starts.append(0)
            sizes.append(shape[k])
        elif ax[0] == "slice":
            _, vi, size, step = ax
            starts.append(values[vi])
            sizes.append((size - 1) * abs(step) + 1 if size else 0)
        else:
            starts.append(values[ax[1]])
            sizes.append(1)
    if all(isinstance(s, int) for s in starts):
        limits = [s + n for s, n in zip(starts, sizes)]
        return lax.slice(x, starts, limits), starts
    ts = _start_tracers(starts)
    return lax.dynamic_slice(x, ts, sizes), ts


def _strided_scatter(
    x: Any, val: Any, plan: Any, values: list[Any], mode: str, axis: int
) -> Any:
    """Basic indexing with one strided slice (``x.at[::2].set(v)``): a
    scatter along that axis at start + i * step, inside the block of the
    other axes -- one in-place-capable op when the others are whole."""
    _, vi, size, step = plan[1][axis]
    block, starts = _block(x, plan, values, keep=axis)
    low = values[vi]
    d = np.dtype(np.int32) if isinstance(low, int) else np.dtype(low.dtype)
    if isinstance(low, int):
        base = low if step > 0 else low + (size - 1) * -step
    else:
        base = low if step > 0 else lax.add(low, (size - 1) * -step)
    idx = lax.iota(d, (size,))
    idx = idx if step == 1 else lax.mul(idx, step)
    idx = idx if isinstance(base, int) and base == 0 else lax.add(idx, base)
    new_block = lax.scatter(block, idx, val, axis, mode)
    if starts is None:
        return new_block
    starts = list(starts)
    starts[axis] = 0
    return lax.dynamic_update_slice(x, new_block, _start_tracers(starts))


def _steps(plan: Any) -> list[tuple[int, int, int]]:
    """(axis, size, step) of every slice with a step other than 1."""
    return [
        (k, ax[2], ax[3])
        for k, ax in enumerate(plan[1])
        if ax[0] == "slice" and ax[3] != 1 and ax[2] > 0
    ]


def _reverse(v: Any, axis: int, size: int) -> Any:
    rev = lax.sub(size - 1, lax.iota(np.int32, (size,)))
    return lax.take(v, rev, axis)


def _strided(block: Any, plan: Any) -> Any:
    """The block with every step-th element of strided slices (ascending),
    negative steps reversed."""
    steps = _steps(plan)
    if not steps:
        return block
    if any(abs(s) > 1 for _, _, s in steps):
        strides = [1] * block.ndim
        for k, _, s in steps:
            strides[k] = abs(s)
        block = lax.slice(block, [0] * block.ndim, list(block.shape), strides)
    for k, size, s in steps:
        if s < 0:
            block = _reverse(block, k, size)
    return block


def _unstrided(new: Any, block: Any, plan: Any) -> Any:
    """Inverse of _strided: ``new`` written into ``block`` at the strided
    positions."""
    steps = _steps(plan)
    if not steps:
        return new
    for k, size, s in steps:
        if s < 0:
            new = _reverse(new, k, size)
    if not any(abs(s) > 1 for _, _, s in steps):
        return new
    interior = [0] * new.ndim
    for k, _, s in steps:
        interior[k] = abs(s) - 1
    zeros = [0] * new.ndim
    spread = lax.pad(new, 0, zeros, zeros, interior)
    mask = lax.pad(lax.full(new.shape, True), False, zeros, zeros, interior)
    return lax.select(mask, spread, block)


def _adv_layout(plan: Any) -> tuple[list[int], list[int], int]:
    """For several advanced axes: the transpose bringing them together (at
    the first one's place), the merged shape, and the index axis."""
    axes = plan[1]
    adv = [k for k, ax in enumerate(axes) if ax[0] == "adv"]
    first = adv[0]
    before = [k for k in range(first) if k not in adv]
    after = [k for k in range(first, len(axes)) if k not in adv]
    return before + adv + after, adv, len(before)


def _view_shape(plan: Any) -> list[int]:
    shape, axes, _, _, _, _ = plan
    out = []
    for k, ax in enumerate(axes):
        if ax[0] == "slice":
            out.append(ax[2])
        elif ax[0] == "int":
            out.append(1)
        else:
            out.append(shape[k])
    return out


def _gathered(view: Any, plan: Any, values: list[Any]) -> tuple[Any, int]:
    """Step 2: the advanced gather; returns it and where B's dims start."""
    axes = plan[1]
    adv = [k for k, ax in enumerate(axes) if ax[0] == "adv"]
    if len(adv) == 1:  # x[i]: the gather wraps negatives itself (one pass)
        ax = axes[adv[0]]
        i = _ops.as_tracer(values[ax[1]])
        return lax.take(view, i, adv[0], wrap_negative=ax[2] == "dynamic"), adv[0]
    (flat,) = _prepare_indices(plan, values, for_update=False)
    perm, adv, p = _adv_layout(plan)
    v = view if perm == list(range(len(perm))) else lax.transpose(view, perm)
    vs = list(v.shape)
    merged = [*vs[:p], int(np.prod(vs[p : p + len(adv)])), *vs[p + len(adv) :]]
    return lax.take(lax.reshape(v, merged), flat, p), p


def _to_front(perm_len: int, p: int, nb: int) -> list[int]:
    """The permutation moving dims [p, p+nb) to the front."""
    dims = list(range(perm_len))
    return dims[p : p + nb] + dims[:p] + dims[p + nb :]


def gather_impl(x: Any, *values: Any, plan: Any) -> Any:
    """x[key] for a parsed plan (runs on Tracers)."""
    _, axes, b_shape, front, out_shape, _ = plan
    values = list(values)
    if 0 in out_shape:
        return lax.full(out_shape, 0, x.dtype)
    block, _ = _block(x, plan, values)
    view = _strided(block, plan)
    if any(ax[0] == "adv" for ax in axes):
        view, p = _gathered(view, plan, values)
        if front and p != 0:
            view = lax.transpose(view, _to_front(view.ndim, p, len(b_shape)))
    if tuple(view.shape) != out_shape:
        view = lax.reshape(view, out_shape)
    return view


def _combine(old: Any, new: Any, mode: str) -> Any:
    if mode == "set":
        return (
            new
            if tuple(new.shape) == tuple(old.shape)
            else lax.broadcast_to(new, old.shape)
        )
    if mode == "add":
        return lax.add(old, new)
    if mode == "mul":
        return lax.mul(old, new)
    if mode == "min":
        return lax.minimum(old, new)
    return lax.maximum(old, new)


MODE_NAMES = {"set": "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}


def check_value_shape(
    vshape: tuple[int, ...], out_shape: tuple[int, ...], mode: str
) -> None:
    """numpy's rule: the value must broadcast to the indexed shape."""
    try:
        ok = np.broadcast_shapes(tuple(vshape), tuple(out_shape)) == tuple(out_shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"at[].{MODE_NAMES[mode]}: a value of shape {tuple(vshape)} cannot be "
            f"broadcast to the indexed shape {tuple(out_shape)}"
        )


def _value_in_view(v: Any, plan: Any) -> Any:
    """Basic indexing: the value laid out like the view (None axes dropped,
    integer axes as size 1), still broadcastable rather than broadcast."""
    _, axes, _, _, out_shape, out_axes = plan
    vshape = list(v.shape)
    v1 = [1] * (len(out_shape) - len(vshape)) + vshape
    where = {k: j for j, k in enumerate(out_axes) if k >= 0}
    target = [1 if ax[0] == "int" else v1[where[k]] for k, ax in enumerate(axes)]
    if target == vshape:
        return v
    return lax.reshape(v, target)


def scatter_impl(x: Any, v: Any, *values: Any, plan: Any, mode: str) -> Any:
    """x.at[key].<mode>(v) for a parsed plan (runs on Tracers)."""
    shape, axes, b_shape, front, out_shape, _ = plan
    values = list(values)
    v = _ops.as_tracer(v, np.dtype(x.dtype))
    if v.dtype != x.dtype:
        v = lax.astype(v, x.dtype)
    check_value_shape(tuple(v.shape), out_shape, mode)
    if 0 in out_shape:
        return x
    adv = [k for k, ax in enumerate(axes) if ax[0] == "adv"]
    view_shape = _view_shape(plan)
    if adv:
        # The value in the gathered layout (before step 3's transpose and
        # reshape): the rest of the view with B's dims at p.
        if len(adv) == 1:
            p = adv[0]
            rest = view_shape[:p] + view_shape[p + 1 :]
        else:
            perm, _, p = _adv_layout(plan)
            vs = [view_shape[k] for k in perm]
            rest = vs[:p] + vs[p + len(adv) :]
        g_shape = rest[:p] + list(b_shape) + rest[p:]
        full = lax.broadcast_to(v, out_shape)
        if front and p != 0:
            f_shape = list(b_shape) + rest
            val = lax.reshape(full, f_shape)
            inv = np.argsort(_to_front(len(f_shape), p, len(b_shape))).tolist()
            val = lax.transpose(val, inv)
        else:
            val = lax.reshape(full, g_shape)
    else:
        val = _value_in_view(v, plan)
    steps = _steps(plan)
    if not adv and len(steps) == 1 and abs(steps[0][2]) > 1:
        return _strided_scatter(x, val, plan, values, mode, steps[0][0])
    strided = any(abs(s) > 1 for _, _, s in steps)
    if mode != "set" or adv or strided:
        block, starts = _block(x, plan, values)
        view = _strided(block, plan)
    else:
        block = view = None
        starts = _starts(plan, values)
    if adv:
        (flat,) = _prepare_indices(plan, values, for_update=True)
        if len(adv) == 1:
            new_view = lax.scatter(view, flat, val, adv[0], mode)
        else:
            perm, _, p = _adv_layout(plan)
            ident = perm == list(range(len(perm)))
            t = view if ident else lax.transpose(view, perm)
            ts = list(t.shape)
            merged = [*ts[:p], int(np.prod(ts[p : p + len(adv)])), *ts[p + len(adv) :]]
            new_t = lax.scatter(lax.reshape(t, merged), flat, val, p, mode)
            new_t = lax.reshape(new_t, ts)
            new_view = (
                new_t if ident else lax.transpose(new_t, np.argsort(perm).tolist())
            )
    elif view is None:
        new_view = (
            val if list(val.shape) == view_shape else lax.broadcast_to(val, view_shape)
        )
    else:
        new_view = _combine(view, val, mode)
    new_block = _unstrided(new_view, block, plan)
    if starts is None or list(new_block.shape) == list(shape):
        return new_block
    return lax.dynamic_update_slice(x, new_block, _start_tracers(starts))


def _starts(plan: Any, values: list[Any]) -> list[Any] | None:
    axes = plan[1]
    if all(ax[0] in ("full", "adv") for ax in axes):
        return None
    return [values[ax[1]] if ax[0] in ("slice", "int") else 0 for ax in axes]


def _start_tracers(starts: list[Any]) -> list[Any]:
    if all(isinstance(s, int) for s in starts):
        return starts
    d = next(np.dtype(s.dtype) for s in starts if not isinstance(s, int))
    return [
        lax.full((), s, d) if isinstance(s, int) else lax.astype(s, d) for s in starts
    ]


gather_impl.op_name = "getitem"  # type: ignore[attr-defined]
scatter_impl.op_name = "at[] update"  # type: ignore[attr-defined]


# ---- entry points ----


def _eager_values(values: list[Any], shape: tuple[int, ...]) -> list[Any]:
    """Index values as arguments of an eager op: Python ints as 0-d int
    arrays (so one program serves every in-range index)."""
    d = _index_dtype(max(shape, default=0))
    return [np.asarray(v, d) if isinstance(v, int) else v for v in values]


def getitem(x: Any, key: Any) -> Any:
    """``x[key]`` (see the module docstring)."""
    if key is Ellipsis or (isinstance(key, tuple) and not key):
        return _ops.unchanged(x)
    p = parse(key, tuple(x.shape))
    values = p.values if _ops._is_tracing() else _eager_values(p.values, x.shape)
    return _ops.apply(gather_impl, (x, *values), (("plan", p.plan),), weak_ref=(0,))


def update(x: Any, key: Any, v: Any, mode: str) -> Any:
    """``x.at[key].<mode>(v)``: mode is set, add, mul, min or max."""
    if mode not in MODES:
        raise ValueError(f"at[]: unknown update mode {mode!r}; one of {MODES}")
    p = parse(key, tuple(x.shape))
    check_value_shape(_ops.shape_of(v), p.out_shape, mode)
    values = p.values if _ops._is_tracing() else _eager_values(p.values, x.shape)
    return _ops.apply(
        scatter_impl,
        (x, v, *values),
        (("plan", p.plan), ("mode", mode)),
        weak_ref=(0,),
    )
