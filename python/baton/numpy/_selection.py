"""Selection and scattering of ``baton.numpy``: insert / delete, select /
choose, compress / extract / place / put, trim_zeros (and the private
helpers that ``_joining``, ``_rearranging``, ``_matrices``, ``_along_axis`` and
``_index_tricks`` share).

As with ``take`` and indexing, static (numpy / list) indices follow numpy
(out of range raises IndexError) and traced ones follow JAX (negative ones
wrap, then reads clamp and updates are dropped). The in-place functions of
numpy (``put``, ``place``, ``put_along_axis``) need ``inplace=False``, as in
JAX, and return the updated array. Functions whose result shape depends on
values (``extract``, ``compress``, ``trim_zeros``, ``delete`` with a traced
``obj``) work on concrete data and raise ``ConcretizationTypeError`` inside
``bt.jit`` unless ``size=`` (or ``assume_unique_indices=True``) fixes the
shape.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from baton import _index_plan, _ops
from baton._baton import Array, lax
from baton.errors import ConcretizationTypeError
from baton.numpy import _creation as _cr
from baton.numpy import _elementwise
from baton.numpy import _operands as _c
from baton.numpy import _shapes as _sh

Tracer = lax.Tracer
_I32 = np.dtype(np.int32)
_BOOL = np.dtype(np.bool_)

__all__ = [
    "choose",
    "compress",
    "delete",
    "extract",
    "insert",
    "piecewise",
    "place",
    "put",
    "select",
    "trim_zeros",
]


# ---- helpers ----


def _run(
    impl: Callable[..., Any], args: tuple[Any, ...], weak_ref: Any = None, **static: Any
) -> Any:
    """impl(*args, **static) as one program (see ``_ops.apply``)."""
    return _ops.apply(impl, args, tuple(sorted(static.items())), weak_ref=weak_ref)


def _traced(x: Any) -> bool:
    return isinstance(x, Tracer)


def _concrete(x: Any, fn: str, arg: str, hint: str = "") -> np.ndarray:
    """x's values on the host; ConcretizationTypeError for a Tracer."""
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(
            f"{fn}: `{arg}` is a traced value inside a jit, but the result's shape "
            f"depends on its values, so it must be concrete{hint}. Compute it "
            "outside jit or pass it as a static argument."
        )
    if isinstance(x, Array):
        return np.asarray(x)
    return _ops.host_array(x)


def _inplace(fn: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(
            f"{fn}: baton arrays are immutable, so they cannot be modified in "
            "place; pass inplace=False to get the updated array instead"
        )


def _weak_like(v: Any, ref: Any) -> Any:
    """A Python scalar as an array of the dtype it takes next to ``ref``
    (so that joining it keeps ref's dtype, as a weak scalar does)."""
    if _ops.is_scalar(v):
        return _cr.asarray(v, _ops.result_dtype(ref, v))
    return v


def _int_indices(idx: np.ndarray, fn: str, arg: str) -> np.ndarray:
    if idx.dtype.kind not in "iu":
        if idx.size == 0:
            return idx.astype(np.int32)
        raise IndexError(f"{fn}: `{arg}` must be integers, not {idx.dtype}")
    return idx


def _check_int_tracer(t: Any, fn: str, arg: str) -> None:
    if np.dtype(t.dtype).kind not in "iu":
        raise IndexError(f"{fn}: `{arg}` must be integers, not {np.dtype(t.dtype)}")


def _cumsum0(t: Any) -> Any:
    """Inclusive prefix sum along axis 0 (log2(n) shifted adds)."""
    n = t.shape[0]
    k = 1
    while k < n:
        lo = [0] * t.ndim
        hi = [0] * t.ndim
        lo[0], hi[0] = k, -k
        t = lax.add(t, lax.pad(t, 0, lo, hi))
        k *= 2
    return t


def _nonzero_sized(m: Any, size: int) -> Any:
    """Positions of the true entries of 1-D bool Tracer m, the first
    ``size`` of them; missing ones are len(m) (out of range)."""
    n = m.shape[0]
    cs = _cumsum0(lax.astype(m, _I32))
    target = lax.select(m, lax.sub(cs, 1), size)
    out = lax.full((size,), n, _I32)
    return lax.scatter(out, target, lax.iota(_I32, (n,)), 0, "set")


def _along(t: Any, axis: int, i: Any) -> Any:
    """Index i placed on axis ``axis`` of t (a basic index tuple)."""
    return (slice(None),) * axis + (i,)


# ---- insert and delete ----


def _axis_or_flat(arr: Any, axis: Any) -> tuple[Any, int, tuple[int, ...]]:
    if axis is None:
        arr = _sh.ravel(arr)
        axis = 0
    s = _ops.shape_of(arr)
    return arr, _ops.normalize_axis(axis, len(s)), s


def _static_positions(obj: Any, n: int, fn: str, ax: int) -> np.ndarray:
    """obj (an int, slice, sequence or bool mask) as positions in [0, n)."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n))
    o = _concrete(
        obj,
        fn,
        "obj",
        " (or pass assume_unique_indices=True)" if fn == "delete" else "",
    )
    if o.dtype == np.bool_:
        if o.shape != (n,):
            raise ValueError(
                f"{fn}: a boolean obj must be 1-D and match the axis length {n}, "
                f"got shape {o.shape}"
            )
        return np.nonzero(o)[0]
    o = _int_indices(o, fn, "obj")
    if o.ndim > 1:
        raise ValueError(f"{fn}: obj must be a scalar or 1-D, got shape {o.shape}")
    return _index_plan.static_int_array(o.ravel(), n, ax).astype(np.int64)


def _delete_traced(a: Any, obj: Any, *, axis: int, keep: int) -> Any:
    t = _ops.as_tracer(a)
    n = t.shape[axis]
    i = _ops.as_tracer(obj)
    i = lax.select(lax.lt(i, 0), lax.add(i, n), i)
    mask = lax.scatter(
        lax.full((n,), True, _BOOL), lax.reshape(i, (-1,)), False, 0, "set"
    )
    return lax.take(t, _nonzero_sized(mask, keep), axis)


def delete(
    arr: Any, obj: Any, axis: int | None = None, *, assume_unique_indices: bool = False
) -> Any:
    """``arr`` without the entries ``obj`` (an int, slice, index array or
    bool mask) along ``axis`` (None: of the flattened array). A traced
    ``obj`` needs ``assume_unique_indices=True`` (distinct, in-range indices).

    >>> bnp.delete(bnp.arange(5), [0, 3])    # [1 2 4]
    """
    arr, ax, s = _axis_or_flat(arr, axis)
    n = s[ax]
    if isinstance(obj, Tracer) and assume_unique_indices:
        _check_int_tracer(obj, "delete", "obj")
        keep = n - int(obj.size)
        if keep < 0:
            raise ValueError(
                f"delete: {obj.size} unique indices cannot fit an axis of {n}"
            )
        return _run(_delete_traced, (arr, obj), axis=ax, keep=keep)
    gone = _static_positions(obj, n, "delete", ax)
    keep = np.setdiff1d(np.arange(n), gone).astype(_index_plan.index_dtype(n))
    if len(keep) == n:
        return _sh.asarray_like(arr)
    return _sh.take(arr, keep, axis=ax)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` inserted before the positions ``obj`` along ``axis``
    (None: into the flattened array). A scalar ``obj`` inserts all of
    ``values`` there as a block; a sequence inserts one value per index.
    Values are converted to arr's dtype.

    >>> bnp.insert(bnp.arange(3), 1, 9)    # [0 9 1 2]
    """
    arr, ax, s = _axis_or_flat(arr, axis)
    n = s[ax]
    if isinstance(obj, slice):
        pos = np.arange(*obj.indices(n))
        scalar = False
    else:
        o = _concrete(obj, "insert", "obj")
        if o.dtype == np.bool_:
            raise IndexError(
                "insert: obj must be integers (a boolean obj is not supported)"
            )
        o = _int_indices(o, "insert", "obj")
        if o.ndim > 1:
            raise ValueError(
                f"insert: obj must be a scalar or 1-D, got shape {o.shape}"
            )
        scalar = o.ndim == 0
        pos = o.ravel().astype(np.int64)
        bad = (pos < -n) | (pos > n)
        if bad.any():
            raise IndexError(
                f"insert: index {int(pos[bad][0])} is out of bounds for axis {ax} "
                f"with size {n}"
            )
        pos = np.where(pos < 0, pos + n, pos)
    d = _ops.dtype_of(arr) or _ops.result_dtype(arr)
    vals = _cr.asarray(values, d)
    vs = _ops.shape_of(vals)
    if scalar:
        vs = (1,) * (len(s) - len(vs)) + vs
        vals = _sh.moveaxis(_sh.reshape(vals, vs), 0, ax) if vs else vals
        num = _ops.shape_of(vals)[ax] if _ops.shape_of(vals) else 1
        new_pos = pos[0] + np.arange(num)
    else:
        num = len(pos)
        order = np.argsort(pos, kind="stable")
        new_pos = np.empty(num, np.int64)
        new_pos[order] = pos[order] + np.arange(num)
    block = (*s[:ax], num, *s[ax + 1 :])
    try:
        vals = _sh.broadcast_to(vals, block)
    except ValueError:
        raise ValueError(
            f"insert: values of shape {vs} cannot be broadcast to the inserted block "
            f"of shape {block}"
        ) from None
    total = n + num
    perm = np.full(total, -1, np.int64)
    perm[new_pos] = n + np.arange(num)
    perm[perm < 0] = np.arange(n)
    joined = _sh.concatenate([arr, vals], ax)
    return _sh.take(joined, perm.astype(_index_plan.index_dtype(total)), axis=ax)


# ---- select and choose ----


def _select(default: Any, *ops: Any, n: int) -> Any:
    conds, choices = ops[:n], ops[n:]
    d = _ops.result_dtype(*choices, default)
    out = _ops.as_tracer(default, d)
    for c, v in zip(conds[::-1], choices[::-1]):
        out = lax.select(_ops.as_tracer(c), _ops.as_tracer(v, d), out)
    return out


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """Elementwise, the choice of the first true condition (``default``
    where none is); conditions and choices broadcast together.

    >>> x = bnp.arange(5)
    >>> bnp.select([x < 2, x > 3], [x, -x], 9)    # [0 1 9 9 -4]
    """
    conds, choices = list(condlist), list(choicelist)
    if len(conds) != len(choices):
        raise ValueError(
            "select: condlist and choicelist must have the same length, got "
            f"{len(conds)} and {len(choices)}"
        )
    if not conds:
        raise ValueError("select: condlist must be non-empty")
    try:
        np.broadcast_shapes(*(_ops.shape_of(x) for x in conds + choices + [default]))
    except ValueError:
        raise ValueError(
            "select: the conditions, choices and default must broadcast together"
        ) from None
    n = len(conds)
    weak = (*tuple(range(n + 1, 2 * n + 1)), 0)
    return _run(_select, (default, *conds, *choices), weak_ref=weak, n=n)


def _choose(a: Any, *choices: Any, mode: str) -> Any:
    i = _ops.as_tracer(a)
    n = len(choices)
    if mode == "wrap":
        i = lax.mod(i, n)
    d = _ops.result_dtype(*choices)
    out = _ops.as_tracer(choices[-1], d)
    for j in range(n - 2, -1, -1):
        hit = lax.le(i, j) if j == 0 else lax.eq(i, j)
        out = lax.select(hit, _ops.as_tracer(choices[j], d), out)
    return out


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Elementwise ``choices[a]``: a picks which choice array each element
    comes from (they broadcast together). mode='raise' needs concrete
    ``a`` in range; 'wrap' wraps around and 'clip' clamps (traced too).

    >>> bnp.choose(bnp.array([0, 1, 0]), [bnp.zeros(3), bnp.ones(3)])    # [0. 1. 0.]
    """
    if out is not None:
        raise NotImplementedError(
            "choose: out= is not supported (arrays are immutable)"
        )
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(
            f"choose: mode must be 'raise', 'wrap' or 'clip', not {mode!r}"
        )
    chs = _sh._operands(choices, "choose")
    if not chs:
        raise ValueError("choose: choices must not be empty")
    d = _ops.dtype_of(a)
    if (d is not None and d.kind not in "iub") or (
        d is None and not isinstance(a, int) and not isinstance(a, Tracer)
    ):
        raise TypeError(f"choose: a must be integers, not {d}")
    if mode == "raise":
        if isinstance(a, Tracer):
            raise ConcretizationTypeError(
                "choose: mode='raise' needs concrete indices to check, but `a` is "
                "traced; use mode='wrap' or mode='clip' inside jit"
            )
        v = _concrete(a, "choose", "a")
        if v.size and (v.min() < 0 or v.max() >= len(chs)):
            raise ValueError(
                f"choose: invalid entry in choice array: the indices must be in "
                f"[0, {len(chs)}) with mode='raise'"
            )
    try:
        np.broadcast_shapes(*(_ops.shape_of(x) for x in [a, *chs]))
    except ValueError:
        raise ValueError("choose: a and the choices must broadcast together") from None
    return _run(_choose, (a, *chs), weak_ref=tuple(range(1, len(chs) + 1)), mode=mode)


# ---- compress, extract, place, put, trim_zeros ----


def _compress_sized(c: Any, a: Any, fill: Any, *, axis: int, size: int) -> Any:
    t = _ops.as_tracer(a)
    n = t.shape[axis]
    m = _ops.as_tracer(c)
    m = m if m.dtype == _BOOL else lax.ne(m, 0)
    if m.shape[0] < n:
        m = lax.pad(m, False, [0], [n - m.shape[0]])
    idx = _nonzero_sized(m, size)
    got = lax.take(t, idx, axis)
    shape = [1] * t.ndim
    shape[axis] = size
    ok = lax.reshape(lax.lt(idx, n), tuple(shape))
    return lax.select(ok, got, _ops.as_tracer(fill, np.dtype(t.dtype)))


def compress(
    condition: Any,
    a: Any,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value: Any = 0,
    out: None = None,
) -> Any:
    """The slices of ``a`` along ``axis`` (None: of the flattened array)
    where 1-D ``condition`` is true. The result's length is the number of
    true entries, so a traced condition needs ``size=`` (the result then
    has ``size`` slices, padded with ``fill_value``).

    >>> bnp.compress([True, False, True], bnp.arange(3))    # [0 2]
    """
    if out is not None:
        raise NotImplementedError(
            "compress: out= is not supported (arrays are immutable)"
        )
    cs = _ops.shape_of(condition)
    if len(cs) != 1:
        raise ValueError(f"compress: condition must be a 1-D array, got shape {cs}")
    if axis is None:
        a, axis = _sh.ravel(a), 0
    s = _ops.shape_of(a)
    ax = _ops.normalize_axis(axis, len(s))
    n = s[ax]
    if size is not None:
        size = operator.index(size)
        if not 0 <= size <= n:
            raise ValueError(
                f"compress: size must be in [0, {n}] (the length of axis {ax}), "
                f"got {size}"
            )
    if isinstance(condition, Tracer):
        if size is None:
            _concrete(condition, "compress", "condition", " (or pass size=)")
        if cs[0] > n:
            raise ValueError(
                f"compress: a traced condition of length {cs[0]} is longer than "
                f"axis {ax} of length {n}"
            )
        return _run(
            _compress_sized,
            (condition, a, fill_value),
            weak_ref=(1,),
            axis=ax,
            size=size,
        )
    c = _concrete(condition, "compress", "condition") != 0
    if len(c) > n:
        if c[n:].any():
            raise ValueError(
                f"compress: condition has true entries beyond the length {n} of "
                f"axis {ax} (out of bounds)"
            )
        c = c[:n]
    idx = np.nonzero(c)[0]
    if size is None:
        return _sh.take(a, idx.astype(_index_plan.index_dtype(n)), axis=ax)
    return _run(_compress_sized, (c, a, fill_value), weak_ref=(1,), axis=ax, size=size)


def extract(
    condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0
) -> Any:
    """The elements of ``arr`` where ``condition`` is true, both flattened
    (``compress(ravel(condition), ravel(arr))``); a traced condition needs
    ``size=``.

    >>> bnp.extract(bnp.arange(4) % 2 == 0, bnp.arange(4))    # [0 2]
    """
    if not isinstance(condition, (Array, Tracer)):
        condition = _concrete(condition, "extract", "condition").ravel()
    else:
        condition = _sh.ravel(condition)
    return compress(condition, _sh.ravel(arr), size=size, fill_value=fill_value)


def _place_traced(a: Any, m: Any, v: Any) -> Any:
    t = _ops.as_tracer(a)
    flat = lax.reshape(t, (-1,))
    mm = lax.reshape(_ops.as_tracer(m), (-1,))
    mm = mm if mm.dtype == _BOOL else lax.ne(mm, 0)
    vals = lax.reshape(_ops.as_tracer(v, np.dtype(t.dtype)), (-1,))
    k = lax.mod(lax.sub(_cumsum0(lax.astype(mm, _I32)), 1), vals.shape[0])
    return lax.reshape(lax.select(mm, lax.take(vals, k, 0), flat), tuple(t.shape))


def _put_flat(a: Any, i: Any, v: Any, *, mode: str) -> Any:
    t = _ops.as_tracer(a)
    n = t.size
    flat = lax.reshape(t, (-1,))
    idx = lax.reshape(_ops.as_tracer(i), (-1,))
    vals = lax.reshape(_ops.as_tracer(v, np.dtype(t.dtype)), (-1,))
    k = idx.shape[0]
    if vals.shape[0] != k:
        rep = lax.mod(lax.iota(_I32, (k,)), vals.shape[0])
        vals = lax.take(vals, rep, 0)
    if mode == "wrap":
        idx = lax.mod(idx, n)
    elif mode == "clip":
        idx = lax.maximum(lax.minimum(idx, n - 1), 0)
    elif mode == "jax":  # traced default: negatives wrap once, then clamp
        idx = lax.select(lax.lt(idx, 0), lax.add(idx, n), idx)
        idx = lax.maximum(lax.minimum(idx, n - 1), 0)
    return lax.reshape(lax.scatter(flat, idx, vals, 0, "set"), tuple(t.shape))


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """``arr`` with the elements where ``mask`` is true replaced by
    ``vals`` in order (repeated if too few). Needs inplace=False.

    >>> bnp.place(bnp.zeros(4), bnp.array([1, 0, 1, 1]), [7.0, 8.0], inplace=False)
    """
    _inplace("place", inplace)
    s, ms = _ops.shape_of(arr), _ops.shape_of(mask)
    if int(np.prod(ms, dtype=np.int64)) != int(np.prod(s, dtype=np.int64)):
        raise ValueError(
            f"place: mask of shape {ms} must have as many elements as arr of shape {s}"
        )
    nv = int(np.prod(_ops.shape_of(vals), dtype=np.int64))
    if isinstance(mask, Tracer):
        if nv == 0:
            raise ValueError(
                "place: vals is empty, and the traced mask cannot be checked to be all "
                "false; pass at least one value"
            )
        return _run(_place_traced, (arr, mask, vals), weak_ref=(0,))
    m = _concrete(mask, "place", "mask").ravel() != 0
    if not m.any():
        return _sh.asarray_like(arr)
    if nv == 0:
        raise ValueError("place: cannot place values from an empty vals array")
    pos = np.nonzero(m)[0].astype(_index_plan.index_dtype(m.size))
    return _run(_put_flat, (arr, pos, vals), weak_ref=(0,), mode="clip")


def put(
    a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True
) -> Any:
    """``a`` with the flattened positions ``ind`` set to ``v`` (repeated
    if too short). Needs inplace=False. mode: None (static indices checked
    as numpy does, traced ones wrapped and clamped as in JAX), 'raise',
    'clip' or 'wrap'.

    >>> bnp.put(bnp.zeros(4), [0, 2], 5.0, inplace=False)    # [5. 0. 5. 0.]
    """
    _inplace("put", inplace)
    if mode not in (None, "raise", "clip", "wrap", "fill"):
        raise ValueError(
            f"put: mode must be None, 'raise', 'clip' or 'wrap', not {mode!r}"
        )
    n = int(np.prod(_ops.shape_of(a), dtype=np.int64))
    ni = int(np.prod(_ops.shape_of(ind), dtype=np.int64))
    nv = int(np.prod(_ops.shape_of(v), dtype=np.int64))
    if ni == 0 or nv == 0:
        return _sh.asarray_like(a)
    if n == 0:
        raise IndexError("put: cannot put values into an empty array")
    if isinstance(ind, (Array, Tracer)):
        _check_int_tracer(ind, "put", "ind")
        if mode == "raise" and isinstance(ind, Tracer):
            raise ConcretizationTypeError(
                "put: mode='raise' needs concrete indices to check, but `ind` is "
                "traced; use mode='clip' or mode='wrap' (or the default) inside jit"
            )
        how = "jax" if mode in (None, "fill") else mode
    else:
        idx = _int_indices(_ops.host_array(ind), "put", "ind")
        if mode in (None, "raise"):
            idx = _index_plan.static_int_array(idx, n, 0)
        ind = idx
        how = "jax" if mode in (None, "raise", "fill") else mode
    return _run(_put_flat, (a, ind, v), weak_ref=(0,), mode=how)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """``filt`` with its leading ('f') and/or trailing ('b') zeros cut off
    along ``axis`` (None: every axis, keeping the bounding box of the
    nonzeros). Needs concrete data (the result's shape depends on it).

    >>> bnp.trim_zeros(bnp.array([0, 0, 1, 0, 2, 0]))    # [1 0 2]
    """
    if not isinstance(trim, str) or not trim or set(trim.lower()) - set("fb"):
        raise ValueError(
            f"trim_zeros: trim must be a string of 'f' and/or 'b', got {trim!r}"
        )
    v = _concrete(filt, "trim_zeros", "filt")
    if v.ndim == 0:
        raise ValueError("trim_zeros: filt must be at least 1-d, got a 0-d array")
    axes = range(v.ndim) if axis is None else _ops.normalize_axes(axis, v.ndim)
    nz = v != 0
    key = [slice(None)] * v.ndim
    t = trim.lower()
    for ax in axes:
        other = tuple(k for k in range(v.ndim) if k != ax)
        hit = np.nonzero(nz.any(axis=other) if other else nz)[0]
        if not hit.size:
            key[ax] = slice(0, 0)
            continue
        lo = int(hit[0]) if "f" in t else 0
        hi = int(hit[-1]) + 1 if "b" in t else v.shape[ax]
        key[ax] = slice(lo, hi)
    return _sh.asarray_like(filt)[tuple(key)]


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Any:
    """``funclist[i](x, *args, **kw)`` (or the constant ``funclist[i]``)
    where ``condlist[i]`` holds (the last true condition wins); one extra
    function gives the value where none holds, else 0. Keeps x's dtype."""
    x = _cr.asarray(x)
    d = np.dtype(x.dtype)
    if isinstance(condlist, (Array, Tracer, np.ndarray)) and (
        _c.ndim_of(condlist) == 0 or _c.ndim_of(condlist) == x.ndim
    ):
        condlist = [condlist]
    condlist = list(condlist)
    funclist = list(funclist)
    nc, nf = len(condlist), len(funclist)
    if nf not in (nc, nc + 1):
        raise ValueError(
            f"piecewise: `funclist` has {nf} entries for {nc} conditions; give "
            f"{nc} (one per condition) or {nc + 1} (the last is the otherwise "
            "value)"
        )

    def value(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else f
        return _sh.broadcast_to(_cr.asarray(v, dtype=d), x.shape)

    conds = [_cr.asarray(c, dtype=bool) for c in condlist]
    if nf == nc + 1:
        out = value(funclist[-1])
    else:
        out = _cr.zeros(x.shape, d)
    for c, f in zip(conds, funclist):
        out = _elementwise.where(c, value(f), out)
    return out
