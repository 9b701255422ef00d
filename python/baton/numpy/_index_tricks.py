"""Index building and grids of ``baton.numpy``: tri and the triangle /
diagonal index helpers, fill_diagonal, indices, meshgrid, ix_, mgrid,
ogrid, r_, c_, s_, index_exp, unravel_index, ravel_multi_index,
fromfunction, geomspace, logspace.

Index arrays are int32 (as in JAX). Values fixed by static arguments
(``tril_indices``, ``mgrid``, ``geomspace``) are computed on the host and
become device arrays (constants inside ``bt.jit``); those built from
arrays work on Tracers. ``unravel_index`` and ``ravel_multi_index`` check
static (numpy) indices as numpy does and clamp traced ones as JAX does.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from baton import _dtypes, _ops
from baton._baton import Array, lax
from baton.errors import ConcretizationTypeError
from baton.numpy import _creation as _cr
from baton.numpy import _elementwise as _el
from baton.numpy import _shapes as _sh
from baton.numpy._selection import _concrete, _inplace, _run

Tracer = lax.Tracer
_I32 = np.dtype(np.int32)
_F32 = np.dtype(np.float32)

__all__ = [
    "c_",
    "diag_indices",
    "diag_indices_from",
    "fill_diagonal",
    "fromfunction",
    "geomspace",
    "index_exp",
    "indices",
    "ix_",
    "logspace",
    "meshgrid",
    "mgrid",
    "ogrid",
    "r_",
    "ravel_multi_index",
    "s_",
    "tri",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "unravel_index",
]


def _dt(dtype: Any, default: np.dtype) -> np.dtype:
    return default if dtype is None else _dtypes.canonicalize(dtype)


def _dim(n: Any, what: str) -> int:
    try:
        v = operator.index(n)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(n).__name__}") from None
    if v < 0:
        raise ValueError(f"{what} must be non-negative, got {v}")
    return v


def _host(values: np.ndarray) -> Any:
    """Host values as a device array (a constant inside a trace)."""
    return _cr.asarray(np.ascontiguousarray(values))


# ---- triangles and diagonals ----


def _tri(*, n: int, m: int, k: int, dtype: np.dtype) -> Any:
    rows = lax.iota(_I32, (n, m), 0)
    cols = lax.iota(_I32, (n, m), 1)
    return lax.astype(lax.ge(lax.add(rows, k), cols), dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """An N x M array with ones at and below the k-th diagonal (float32
    by default).

    >>> bnp.tri(3, k=-1)    # [[0. 0. 0.] [1. 0. 0.] [1. 1. 0.]]
    """
    n = _dim(N, "tri: N")
    m = n if M is None else _dim(M, "tri: M")
    return _run(_tri, (), n=n, m=m, k=operator.index(k), dtype=_dt(dtype, _F32))


def _tri_indices(name: str, n: Any, k: Any, m: Any, lower: bool) -> tuple[Any, Any]:
    n = _dim(n, f"{name}: n")
    m = n if m is None else _dim(m, f"{name}: m")
    k = operator.index(k)
    r, c = np.indices((n, m))
    keep = (c - r <= k) if lower else (c - r >= k)
    return _host(r[keep].astype(_I32)), _host(c[keep].astype(_I32))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """The (row, column) indices of the lower triangle of an n x m array
    (at and below the k-th diagonal).

    >>> bnp.tril_indices(2)    # ([0 1 1], [0 0 1])
    """
    return _tri_indices("tril_indices", n, k, m, True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """The (row, column) indices of the upper triangle of an n x m array
    (at and above the k-th diagonal).

    >>> bnp.triu_indices(2)    # ([0 0 1], [0 1 1])
    """
    return _tri_indices("triu_indices", n, k, m, False)


def _shape_2d(name: str, arr: Any) -> tuple[int, ...]:
    s = tuple(arr.shape) if hasattr(arr, "shape") else _ops.shape_of(arr)
    if len(s) != 2:
        raise ValueError(f"{name}: only 2-D inputs are accepted, got shape {s}")
    return s


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``tril_indices`` for the shape of 2-D ``arr``.

    >>> bnp.tril_indices_from(bnp.ones((2, 3)))    # ([0 1 1], [0 0 1])
    """
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``triu_indices`` for the shape of 2-D ``arr``.

    >>> bnp.triu_indices_from(bnp.ones((2, 2)), 1)    # ([0], [1])
    """
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """``ndim`` copies of ``arange(n)``: the indices of the main diagonal
    of an n x n x ... array.

    >>> bnp.diag_indices(3)    # ([0 1 2], [0 1 2])
    """
    n = _dim(n, "diag_indices: n")
    nd = _dim(ndim, "diag_indices: ndim")
    i = _host(np.arange(n, dtype=_I32))
    return (i,) * nd


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """``diag_indices`` for ``arr`` (at least 2-D, all dimensions equal).

    >>> bnp.diag_indices_from(bnp.ones((2, 2)))    # ([0 1], [0 1])
    """
    s = _ops.shape_of(arr)
    if len(s) < 2:
        raise ValueError(
            f"diag_indices_from: the input must be at least 2-d, got shape {s}"
        )
    if len(set(s)) != 1:
        raise ValueError(
            f"diag_indices_from: all dimensions of the input must be of equal length, "
            f"got shape {s}"
        )
    return diag_indices(s[0], len(s))


def _fill_diag(a: Any, v: Any, *, pos: tuple[int, int, int], nv: int) -> Any:
    t = _ops.as_tracer(a)
    flat = lax.reshape(t, (-1,))
    idx = np.arange(*pos)
    vals = lax.reshape(_ops.as_tracer(v, np.dtype(t.dtype)), (-1,))
    if nv != len(idx):
        vals = lax.take(vals, lax.constant((np.arange(len(idx)) % nv).astype(_I32)), 0)
    out = lax.scatter(
        flat,
        lax.constant(idx.astype(np.int64 if t.size >= 2**31 else _I32)),
        vals,
        0,
        "set",
    )
    return lax.reshape(out, tuple(t.shape))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """``a`` with its main diagonal set to ``val`` (a scalar, or values
    used in order and repeated). ``a``: 2-D, or all dimensions equal.
    ``wrap=True`` continues the diagonal below a tall matrix (numpy).
    Needs inplace=False.

    >>> bnp.fill_diagonal(bnp.zeros((2, 2)), 1.0, inplace=False)    # [[1. 0.] [0. 1.]]
    """
    _inplace("fill_diagonal", inplace)
    s = _ops.shape_of(a)
    if len(s) < 2:
        raise ValueError(
            f"fill_diagonal: the array must be at least 2-d, got shape {s}"
        )
    if len(s) == 2:
        step = s[1] + 1
        end = s[0] * s[1] if wrap else min(s[0], s[1]) * s[1]
    else:
        if len(set(s)) != 1:
            raise ValueError(
                "fill_diagonal: all dimensions of the input must be of equal length, "
                f"got shape {s}"
            )
        step = 1 + int(np.sum(np.cumprod(s[:-1])))
        end = int(np.prod(s, dtype=np.int64))
    nv = int(np.prod(_ops.shape_of(val), dtype=np.int64))
    if nv == 0:
        raise ValueError("fill_diagonal: val must not be empty")
    if end == 0:
        return _sh.asarray_like(a)
    return _run(_fill_diag, (a, val), weak_ref=(0,), pos=(0, end, step), nv=nv)


# ---- indices, meshgrid, ix_, fromfunction ----


def _indices(*, dims: tuple[int, ...], dtype: np.dtype, sparse: bool) -> Any:
    nd = len(dims)
    if sparse:
        return tuple(
            lax.iota(dtype, tuple(d if k == i else 1 for k, d in enumerate(dims)), i)
            for i in range(nd)
        )
    return lax.concatenate(
        [lax.reshape(lax.iota(dtype, dims, i), (1, *dims)) for i in range(nd)], 0
    )


def indices(dimensions: Any, dtype: Any = None, sparse: bool = False) -> Any:
    """The index grid of an array of shape ``dimensions``: out[i] holds
    each element's i-th index (shape (N, *dimensions); int32 by default).
    sparse=True gives a tuple of broadcastable arrays instead.

    >>> bnp.indices((2, 3))[1]    # [[0 1 2] [0 1 2]]
    """
    dims = tuple(
        _dim(d, "indices: dimensions") for d in _sh._ints(dimensions, "dimensions")
    )
    d = _dt(dtype, _I32)
    if not dims:
        return () if sparse else _cr.zeros((0,), d)
    return _run(_indices, (), dims=dims, dtype=d, sparse=bool(sparse))


def meshgrid(
    *xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> list[Any]:
    """Coordinate arrays from 1-D coordinate vectors: with 'xy' (the
    default) the first two output axes are swapped (Cartesian), with 'ij'
    they follow the inputs (matrix). sparse=True leaves them broadcastable.

    >>> [g.shape for g in bnp.meshgrid(bnp.arange(3), bnp.arange(2))]
    [(2, 3), (2, 3)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    shapes = [_ops.shape_of(x) for x in xi]
    if any(len(s) != 1 for s in shapes):
        raise ValueError(f"meshgrid: the arguments must be 1-D, got shapes {shapes}")
    n = len(xi)
    lens = [s[0] for s in shapes]
    pos = list(range(n))
    if indexing == "xy" and n >= 2:
        pos[0], pos[1] = 1, 0
        lens[0], lens[1] = lens[1], lens[0]
    out = []
    for x, p in zip(xi, pos):
        g = _sh.reshape(x, tuple(lens[p] if k == p else 1 for k in range(n)))
        out.append(g if sparse else _sh.broadcast_to(g, tuple(lens)))
    return out


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-D sequences: the i-th has shape
    (1, ..., len, ..., 1), so ``x[ix_(rows, cols)]`` picks a sub-grid.
    Boolean masks must be concrete (they become their nonzero positions).

    >>> x = bnp.arange(9).reshape(3, 3); x[bnp.ix_([0, 2], [1])]    # [[1] [7]]
    """
    n = len(args)
    out = []
    for i, a in enumerate(args):
        s = _ops.shape_of(a)
        if len(s) != 1:
            raise ValueError(
                f"ix_: the arguments must be 1-D, got shape {s} for argument {i}"
            )
        d = _ops.dtype_of(a)
        if d == np.bool_:
            v = _concrete(a, "ix_", f"args[{i}] (a boolean mask)")
            a = _host(np.nonzero(v)[0].astype(_I32))
        elif not isinstance(a, (Array, Tracer)):
            v = _ops.host_array(a)
            a = _host(v.astype(_I32) if v.size == 0 else v)
        out.append(_sh.reshape(a, tuple(-1 if k == i else 1 for k in range(n))))
    return tuple(out)


def fromfunction(
    function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any
) -> Any:
    """``function(*indices(shape, dtype), **kwargs)``: an array whose
    element at (i, j, ...) is function(i, j, ...) (float32 indices by
    default).

    >>> bnp.fromfunction(lambda i, j: i + j, (2, 2))    # [[0. 1.] [1. 2.]]
    """
    return function(*indices(shape, dtype), **kwargs)


# ---- unravel_index, ravel_multi_index ----


def _unravel(i: Any, *, shape: tuple[int, ...]) -> Any:
    t = _ops.as_tracer(i)
    d = np.dtype(t.dtype)
    total = int(np.prod(shape, dtype=np.int64))
    if total == 0:
        return tuple(lax.full(tuple(t.shape), 0, d) for _ in shape)
    # computed in a type that holds the size, the results in i's dtype
    wide = np.dtype(np.int64) if d.itemsize == 8 or total >= 2**31 else _I32
    w = lax.astype(t, wide)
    w = lax.select(lax.lt(w, 0), lax.add(w, total), w)
    w = lax.maximum(lax.minimum(w, total - 1), 0)
    out = []
    for n in shape[::-1]:
        out.append(lax.astype(lax.rem(w, n), d))
        w = _el.floor_divide(w, n)
    return tuple(out[::-1])


def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """The multi-index into an array of ``shape`` of each flat index.
    Static indices must be in range (numpy); traced ones wrap negatives and
    clamp (JAX).

    >>> bnp.unravel_index(5, (2, 3))    # (1, 2)
    """
    dims = tuple(_dim(d, "unravel_index: shape") for d in _sh._ints(shape, "shape"))
    d = _ops.dtype_of(indices)
    if (d is not None and d.kind not in "iu") or (
        d is None and not isinstance(indices, (int, Tracer))
    ):
        raise TypeError(f"unravel_index: indices must be integers, not {d}")
    if not isinstance(indices, (Array, Tracer)):
        v = _ops.host_array(indices)
        total = int(np.prod(dims, dtype=np.int64))
        if v.size and (v.min() < 0 or v.max() >= total):
            bad = int(v.min()) if v.min() < 0 else int(v.max())
            raise ValueError(
                f"unravel_index: index {bad} is out of bounds for an array of size "
                f"{total} (shape {dims})"
            )
    return tuple(_run(_unravel, (indices,), shape=dims))


def _ravel_multi(
    *idx: Any, dims: tuple[int, ...], mode: str, order: str, dtype: Any
) -> Any:
    d = dtype if dtype is not None else _ops.result_dtype(*idx)
    ts = [_ops.as_tracer(i, d) for i in idx]
    strides = []
    acc = 1
    for n in dims[::-1] if order == "C" else dims:
        strides.append(acc)
        acc *= n
    if order == "C":
        strides = strides[::-1]
    out = None
    for t, n, st in zip(ts, dims, strides):
        if mode == "wrap":
            t = lax.mod(t, n)
        elif mode == "clip":
            t = lax.maximum(lax.minimum(t, n - 1), 0)
        term = lax.mul(t, st) if st != 1 else t
        out = term if out is None else lax.add(out, term)
    return out


def ravel_multi_index(
    multi_index: Any,
    dims: Any,
    mode: str = "raise",
    order: str = "C",
    *,
    dtype: Any = None,
) -> Any:
    """The flat index (row-major with order='C', column-major with 'F') of
    each multi-index in an array of shape ``dims``. mode: 'raise' (concrete
    indices, checked), 'wrap' or 'clip'.

    >>> bnp.ravel_multi_index(([1, 0], [2, 1]), (2, 3))    # [5 1]
    """
    dims = tuple(_dim(d, "ravel_multi_index: dims") for d in _sh._ints(dims, "dims"))
    idx = list(multi_index)
    if len(idx) != len(dims):
        raise ValueError(
            f"ravel_multi_index: multi_index must be a sequence of length {len(dims)}, "
            f"got {len(idx)}"
        )
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(
            f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', not {mode!r}"
        )
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', not {order!r}")
    for k, i in enumerate(idx):
        d = _ops.dtype_of(i)
        if (d is not None and d.kind not in "iu") or (
            d is None and not isinstance(i, (int, Tracer))
        ):
            raise TypeError(
                f"ravel_multi_index: multi_index[{k}] must be integers, not {d}"
            )
    if mode == "raise":
        for k, (i, n) in enumerate(zip(idx, dims)):
            if isinstance(i, Tracer):
                raise ConcretizationTypeError(
                    "ravel_multi_index: mode='raise' needs concrete indices to check, "
                    f"but multi_index[{k}] is traced; use mode='wrap' or 'clip' "
                    "inside jit"
                )
            v = _concrete(i, "ravel_multi_index", f"multi_index[{k}]")
            if v.size and (v.min() < 0 or v.max() >= n):
                raise ValueError(
                    f"ravel_multi_index: invalid entry in coordinates array "
                    f"multi_index[{k}]: the indices must be in [0, {n})"
                )
    try:
        np.broadcast_shapes(*(_ops.shape_of(i) for i in idx))
    except ValueError:
        raise ValueError(
            "ravel_multi_index: the index arrays must broadcast together"
        ) from None
    d = None if dtype is None else _dtypes.canonicalize(dtype)
    return _run(_ravel_multi, tuple(idx), dims=dims, mode=mode, order=order, dtype=d)


# ---- grids: mgrid, ogrid, r_, c_, s_, index_exp ----


def _slice_values(sl: slice, what: str) -> tuple[np.ndarray, bool]:
    """A slice of a grid as float64/int64 host values; and whether they
    are floating point."""
    start = 0 if sl.start is None else sl.start
    step = 1 if sl.step is None else sl.step
    stop = sl.stop
    if stop is None:
        raise ValueError(f"{what}: a slice needs a stop, got {sl}")
    for v in (start, stop, step):
        if isinstance(v, (Array, Tracer)):
            raise TypeError(f"{what}: slice bounds must be static numbers, not arrays")
    if isinstance(step, complex):
        num = int(abs(step))
        return np.linspace(float(start), float(stop), num), True
    is_float = any(isinstance(v, (float, np.floating)) for v in (start, stop, step))
    if step == 0:
        raise ValueError(f"{what}: slice step must not be zero")
    return np.arange(
        start, stop, step, dtype=np.float64 if is_float else np.int64
    ), is_float


def _grid_dtype(is_float: bool) -> np.dtype:
    return _F32 if is_float else _I32


class _Grid:
    """``mgrid[...]`` (dense) and ``ogrid[...]`` (open)."""

    def __init__(self, sparse: bool, name: str) -> None:
        self.sparse = sparse
        self.name = name

    def __getitem__(self, key: Any) -> Any:
        single = isinstance(key, slice)
        keys = (key,) if single else key
        if not isinstance(keys, tuple) or not all(isinstance(k, slice) for k in keys):
            raise TypeError(
                f"{self.name}: index with slices (start:stop:step), got {key!r}"
            )
        vals = [_slice_values(k, self.name) for k in keys]
        d = _grid_dtype(any(f for _, f in vals))
        if single:
            return _host(vals[0][0].astype(d))
        arrs = [v.astype(d) for v, _ in vals]
        if self.sparse:
            n = len(arrs)
            return [
                _host(a.reshape(tuple(-1 if k == i else 1 for k in range(n))))
                for i, a in enumerate(arrs)
            ]
        if not arrs:
            return _cr.zeros((0,), d)
        return _host(np.stack(np.meshgrid(*arrs, indexing="ij")))


mgrid = _Grid(False, "mgrid")
ogrid = _Grid(True, "ogrid")


class _AxisConcatenator:
    """``r_[...]`` and ``c_[...]``: slices, scalars and arrays joined along
    an axis, with numpy's optional leading directive string."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str) -> None:
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def _directive(self, s: str) -> tuple[int, int, int, str | None]:
        if s in ("r", "c"):
            return self.axis, self.ndmin, self.trans1d, s
        try:
            parts = [int(p) for p in s.split(",")]
        except ValueError:
            parts = []
        if not 1 <= len(parts) <= 3:
            raise ValueError(
                f"{self.name}: the directive {s!r} must be 'r', 'c' or one to three "
                "comma-separated integers (axis, ndmin, trans1d)"
            )
        parts += [self.ndmin, self.trans1d][len(parts) - 1 :]
        return parts[0], parts[1], parts[2], None

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d, matrix = self._directive(items[0])
            items = items[1:]
        objs: list[Any] = []
        scalars: list[Any] = []
        for it in items:
            if isinstance(it, str):
                raise ValueError(
                    f"{self.name}: a directive string must come first, got {it!r}"
                )
            if isinstance(it, slice):
                v, f = _slice_values(it, self.name)
                x = _host(v.astype(_grid_dtype(f)))
            elif _ops.is_scalar(it):
                scalars.append(it)
                x = _cr.asarray(it)
            else:
                x = _sh.asarray_like(it)
            x = self._promote(x, ndmin, trans1d)
            objs.append((x, _ops.is_scalar(it)))
        if not objs:
            return _cr.zeros((0,), _F32)
        strong = [x for x, sc in objs if not sc]
        d = (
            _ops.result_dtype(*strong, *scalars)
            if strong
            else _ops.result_dtype(*scalars)
        )
        out = _sh.concatenate([_cr.asarray(x, d) for x, _ in objs], axis)
        if matrix is not None and _sh.ndim(out) == 1:
            out = _sh.reshape(out, (1, -1) if matrix == "r" else (-1, 1))
        return out

    @staticmethod
    def _promote(x: Any, ndmin: int, trans1d: int) -> Any:
        s = _ops.shape_of(x)
        if len(s) >= ndmin:
            return x
        x = _sh.reshape(x, (1,) * (ndmin - len(s)) + s)
        if trans1d != -1:
            k2 = ndmin - len(s)
            k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
            axes = list(range(ndmin))
            x = _sh.transpose(x, axes[:k1] + axes[k2:] + axes[k1:k2])
        return x


r_ = _AxisConcatenator(0, 1, -1, "r_")
c_ = _AxisConcatenator(-1, 2, 0, "c_")


class _IndexExpression:
    """``s_[...]`` / ``index_exp[...]``: the index expression itself
    (index_exp always a tuple)."""

    def __init__(self, maketuple: bool) -> None:
        self.maketuple = maketuple

    def __getitem__(self, item: Any) -> Any:
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)


# ---- geomspace, logspace ----


def _spaced(
    name: str, values: Callable[[], np.ndarray], dtype: Any, args: tuple[Any, ...]
) -> Any:
    for a in args:
        if isinstance(a, (Array, Tracer)):
            raise TypeError(
                f"{name}: start and stop must be static numbers or numpy data (the "
                "values are computed on the host), not baton arrays"
            )
    d = _dt(dtype, _F32)
    v = values()
    return _host(v.astype(d))


def geomspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``num`` numbers from start to stop spaced evenly on a log scale (a
    geometric progression; float32 unless dtype is given).

    >>> bnp.geomspace(1, 1000, 4)    # [1. 10. 100. 1000.]
    """
    num = _dim(num, "geomspace: num")
    if np.any(np.asarray(start) == 0) or np.any(np.asarray(stop) == 0):
        raise ValueError(
            "geomspace: a geometric sequence cannot include zero (start or stop)"
        )
    return _spaced(
        "geomspace",
        lambda: np.geomspace(
            start, stop, num, endpoint=endpoint, dtype=np.float64, axis=axis
        ),
        dtype,
        (start, stop),
    )


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``base ** linspace(start, stop, num)``: numbers spaced evenly on a
    log scale (float32 unless dtype is given).

    >>> bnp.logspace(0, 2, 3)    # [1. 10. 100.]
    """
    num = _dim(num, "logspace: num")
    return _spaced(
        "logspace",
        lambda: np.logspace(
            start, stop, num, endpoint=endpoint, base=base, dtype=np.float64, axis=axis
        ),
        dtype,
        (start, stop, base),
    )
