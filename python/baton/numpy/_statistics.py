"""Statistics and binning: cov, corrcoef, searchsorted, digitize, interp,
bincount, histogram, histogram_bin_edges.

searchsorted is a branchless binary search: ceil(log2(n + 1)) gathers of
the sorted array, each halving the candidate range (O(m log n), no
sort primitive needed); NaN sorts last, as in numpy. Functions whose result
shape depends on values (bincount without ``length``) need concrete data
and raise ``ConcretizationTypeError`` under ``bt.jit``.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import lax
from baton.numpy import _operands as _c

__all__ = [
    "bincount",
    "corrcoef",
    "cov",
    "digitize",
    "histogram",
    "histogram_bin_edges",
    "interp",
    "searchsorted",
]


# ---- searchsorted / digitize ----


def _lt_nan_last(x: Any, y: Any) -> Any:
    """x < y in numpy's sort order (NaN after everything)."""
    r = lax.lt(x, y)
    if _ops.is_float(np.dtype(x.dtype)):
        r = lax.bitwise_or(r, lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))
    return r


def _search(a: Any, v: Any, right: bool) -> Any:
    """Insertion points of v into sorted 1-D a (int32), as numpy."""
    n = a.shape[0]
    shape = tuple(v.shape)
    pos = lax.full(shape, 0, np.int32)
    if n == 0:
        return pos
    step = 1 << (n.bit_length() - 1)
    while step:
        cand = lax.add(pos, step)
        ok = lax.le(cand, n)
        x = lax.gather(a, lax.sub(lax.minimum(cand, n), 1), 0)
        go = lax.bitwise_not(_lt_nan_last(v, x)) if right else _lt_nan_last(x, v)
        pos = lax.select(lax.bitwise_and(ok, go), cand, pos)
        step >>= 1
    return pos


def _searchsorted_impl(
    a: Any, v: Any, sorter: Any, *, right: bool, has_sorter: bool
) -> Any:
    x, y = _ops.promote(a, v)
    if has_sorter:
        s = _ops.as_tracer(sorter)
        x = lax.gather(x, lax.select(lax.lt(s, 0), lax.add(s, x.shape[0]), s), 0)
    return _search(x, y, right)


def _side(name: str, side: str) -> bool:
    if side not in ("left", "right"):
        raise ValueError(f"{name}: side must be 'left' or 'right', not {side!r}")
    return side == "right"


def searchsorted(
    a: Any, v: Any, side: str = "left", sorter: Any = None, *, method: str = "scan"
) -> Any:
    """Indices where v's elements would be inserted into sorted 1-D ``a`` to
    keep it sorted (int32): before equal elements for side='left', after
    for 'right'. A binary search (module docstring); ``method`` is accepted
    for JAX compatibility and ignored.

    >>> bnp.searchsorted(bnp.array([1, 2, 2, 5]), bnp.array([2, 6]))   # [1, 4]
    """
    right = _side("searchsorted", side)
    sa = _ops.shape_of(a)
    if len(sa) != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {sa}")
    if sorter is not None and _ops.shape_of(sorter) != sa:
        raise ValueError(
            f"searchsorted: sorter must have a's shape {sa}, got "
            f"{_ops.shape_of(sorter)}"
        )
    st = (("right", right), ("has_sorter", sorter is not None))
    return _ops.apply(
        _searchsorted_impl,
        (a, v, 0 if sorter is None else sorter),
        st,
        weak_ref=(0, 1),
    )


def _reverse(t: Any) -> Any:
    n = t.shape[0]
    return lax.gather(t, lax.sub(n - 1, lax.iota(np.int32, (n,), 0)), 0)


def _digitize_impl(x: Any, bins: Any, *, right: bool) -> Any:
    v, b = _ops.promote(x, bins)
    n = b.shape[0]
    if n == 0:
        return lax.full(tuple(v.shape), 0, np.int32)
    inc = _search(b, v, not right)
    dec = lax.sub(n, _search(_reverse(b), v, not right))
    rising = lax.ge(
        lax.reshape(lax.slice(b, [n - 1], [n]), ()),
        lax.reshape(lax.slice(b, [0], [1]), ()),
    )
    return lax.select(rising, inc, dec)


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """The index of the bin of each x in monotonic 1-D ``bins`` (int32):
    i with bins[i-1] <= x < bins[i] (``right``: bins[i-1] < x <= bins[i]),
    decreasing bins reversed, as numpy.

    >>> bnp.digitize(bnp.array([0.5, 1.5, 3.0]), bnp.array([1.0, 2.0, 3.0]))
    Array([0, 1, 3], dtype=int32)
    """
    sb = _ops.shape_of(bins)
    if len(sb) != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {sb}")
    return _ops.apply(_digitize_impl, (x, bins), (("right", bool(right)),))


# ---- interp ----


def _interp_impl(
    x: Any,
    xp: Any,
    fp: Any,
    left: Any,
    right: Any,
    period: Any,
    *,
    has_left: bool,
    has_right: bool,
    has_period: bool,
) -> Any:
    d = _c.inexact_dtype(x, xp, fp)
    w = _c.work_dtype(d)
    t = lax.astype(_ops.as_tracer(x), w)
    xs = lax.astype(_ops.as_tracer(xp), w)
    fs = lax.astype(_ops.as_tracer(fp), w)
    n = xs.shape[0]
    if has_period:
        p = lax.abs(lax.astype(_ops.as_tracer(period), w))
        t = lax.mod(t, p)
        xs = lax.mod(xs, p)
        # Sort xp (with fp) by rank: O(n^2) comparisons, no sort primitive.
        i = lax.iota(np.int32, (n, n), 0)
        j = lax.iota(np.int32, (n, n), 1)
        xi, xj = lax.reshape(xs, (n, 1)), lax.reshape(xs, (1, n))
        before = lax.bitwise_or(
            lax.lt(xj, xi), lax.bitwise_and(lax.eq(xj, xi), lax.lt(j, i))
        )
        rank = lax.sum(lax.astype(before, np.int32), (1,))
        xs = lax.scatter(lax.full((n,), 0, w), rank, xs, 0, "set")
        fs = lax.scatter(lax.full((n,), 0, w), rank, fs, 0, "set")
        first, last = lax.slice(xs, [0], [1]), lax.slice(xs, [n - 1], [n])
        xs = lax.concatenate([lax.sub(last, p), xs, lax.add(first, p)], 0)
        fs = lax.concatenate(
            [lax.slice(fs, [n - 1], [n]), fs, lax.slice(fs, [0], [1])], 0
        )
        n += 2
    if n == 1:
        r = lax.broadcast_to(lax.reshape(fs, ()), tuple(t.shape))
    else:
        k = lax.minimum(lax.maximum(_search(xs, t, True), 1), n - 1)
        x0, x1 = lax.gather(xs, lax.sub(k, 1), 0), lax.gather(xs, k, 0)
        f0, f1 = lax.gather(fs, lax.sub(k, 1), 0), lax.gather(fs, k, 0)
        dx = lax.sub(x1, x0)
        zero = lax.eq(dx, 0)
        slope = lax.true_divide(
            lax.sub(f1, f0), lax.select(zero, lax.full((), 1, w), dx)
        )
        r = lax.add(f0, lax.mul(slope, lax.sub(t, x0)))
        r = lax.select(zero, f1, r)
    if not has_period:
        lo = (
            lax.astype(_ops.as_tracer(left), w)
            if has_left
            else lax.reshape(lax.slice(fs, [0], [1]), ())
        )
        hi = (
            lax.astype(_ops.as_tracer(right), w)
            if has_right
            else lax.reshape(lax.slice(fs, [n - 1], [n]), ())
        )
        r = lax.select(lax.lt(t, lax.reshape(lax.slice(xs, [0], [1]), ())), lo, r)
        r = lax.select(lax.gt(t, lax.reshape(lax.slice(xs, [n - 1], [n]), ())), hi, r)
    return _c.down(r, d)


def interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    """Piecewise-linear interpolation of the points (xp, fp) at x (xp
    increasing, 1-D); ``left``/``right`` outside (default fp[0], fp[-1]);
    ``period`` for periodic xp (xp is then sorted by an O(n^2) rank, no sort
    primitive). Integers give float32.

    >>> bnp.interp(bnp.array([1.5, 5.0]), [1.0, 2.0], [10.0, 20.0])
    Array([15., 20.], dtype=float32)
    """
    sx, sf = _ops.shape_of(xp), _ops.shape_of(fp)
    if len(sx) != 1 or sx != sf:
        raise ValueError(
            f"interp: xp and fp must be 1-D arrays of the same length, got shapes "
            f"{sx} and {sf}"
        )
    if sx[0] == 0:
        raise ValueError("interp: xp and fp must not be empty")
    if period is not None:
        if _ops.is_scalar(period) and period == 0:
            raise ValueError("interp: period must be a non-zero value")
    st = (
        ("has_left", left is not None),
        ("has_right", right is not None),
        ("has_period", period is not None),
    )
    args = (
        x,
        xp,
        fp,
        0.0 if left is None else left,
        0.0 if right is None else right,
        1.0 if period is None else period,
    )
    return _ops.apply(_interp_impl, args, st, weak_ref=(0, 1, 2))


# ---- bincount / histogram ----


def _bincount_impl(x: Any, weights: Any, *, length: int, has_weights: bool) -> Any:
    t = _ops.as_tracer(x)
    idx = lax.maximum(t, lax.full((), 0, t.dtype))  # JAX: negatives count as 0
    keep = lax.lt(idx, length)
    if has_weights:
        wt = _ops.as_tracer(weights)
        d = np.dtype(wt.dtype)
        d = _c.I32 if d == _c.BOOL else d
        wt = lax.astype(wt, d)
    else:
        d = _c.I32
        wt = lax.full(tuple(t.shape), 1, d)
    wt = lax.select(keep, wt, lax.full((), 0, d))
    idx = lax.astype(lax.select(keep, idx, lax.full((), 0, t.dtype)), np.int32)
    return lax.scatter(lax.full((length,), 0, d), idx, wt, 0, "add")


def bincount(
    x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None
) -> Any:
    """Counts of each value 0, 1, ... in the 1-D non-negative integer array
    x (summed ``weights`` if given), ``max(x) + 1`` or ``minlength`` long.
    Under ``bt.jit`` pass a static ``length`` (values >= length are dropped,
    negative ones counted as 0, as in JAX).

    >>> bnp.bincount(bnp.array([0, 1, 1, 3]))   # [1, 2, 0, 1]
    """
    sx = _ops.shape_of(x)
    if len(sx) != 1:
        raise ValueError(f"bincount: x must be 1-D, got shape {sx}")
    dx = _ops.result_dtype(x)
    if not _ops.is_int(dx) and dx != _c.BOOL:
        raise TypeError(f"bincount: x must have an integer dtype, not {dx.name}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if weights is not None and _ops.shape_of(weights) != sx:
        raise ValueError(
            f"bincount: weights must have x's shape {sx}, got {_ops.shape_of(weights)}"
        )
    if length is None:
        h = _c.concrete(x, "bincount", "the result length max(x) + 1 (pass length=)")
        if h.size and h.min() < 0:
            raise ValueError("bincount: x must have no negative elements")
        length = builtins.max(int(h.max()) + 1 if h.size else 0, minlength)
    else:
        length = operator.index(length)
        if length < 0:
            raise ValueError(f"bincount: length must be non-negative, got {length}")
    st = (("length", length), ("has_weights", weights is not None))
    return _ops.apply(_bincount_impl, (x, 0 if weights is None else weights), st)


def _edges_impl(a: Any, lo: Any, hi: Any, *, bins: int, has_range: bool) -> Any:
    d = _c.inexact_dtype(a)
    w = _c.work_dtype(d)
    t = lax.astype(_ops.as_tracer(a), w)
    if has_range:
        first, last = (
            lax.astype(_ops.as_tracer(lo), w),
            lax.astype(_ops.as_tracer(hi), w),
        )
    elif t.shape and 0 not in t.shape:
        first, last = lax.min(t), lax.max(t)
    else:
        first, last = lax.full((), 0, w), lax.full((), 1, w)
    same = lax.eq(first, last)
    first = lax.select(same, lax.sub(first, 0.5), first)
    last = lax.select(same, lax.add(last, 0.5), last)
    step = lax.true_divide(lax.sub(last, first), float(bins))
    e = lax.add(first, lax.mul(lax.iota(w, (bins + 1,), 0), step))
    e = lax.select(lax.eq(lax.iota(np.int32, (bins + 1,), 0), bins), last, e)
    return _c.down(e, d)


def _bins_edges(name: str, a: Any, bins: Any, range: Any) -> Any:
    if isinstance(bins, str):
        raise NotImplementedError(
            f"{name}: bins={bins!r} (a binning rule) is not supported; pass an "
            "int or the edges"
        )
    if _ops.shape_of(bins) == () and not isinstance(bins, (_c.Tracer,)):
        try:
            nb = operator.index(bins)
        except TypeError:
            raise TypeError(
                f"{name}: bins must be an int or a 1-D array of edges, not {bins!r}"
            ) from None
        if nb < 1:
            raise ValueError(f"{name}: bins must be positive, got {nb}")
        if range is not None:
            try:
                lo, hi = range
            except (TypeError, ValueError):
                raise ValueError(
                    f"{name}: range must be a pair (min, max), got {range!r}"
                ) from None
            if not _c.is_traced(lo, hi) and float(lo) > float(hi):
                raise ValueError(
                    f"{name}: max must be larger than min in range parameter"
                )
        else:
            lo, hi = 0.0, 1.0
        st = (("bins", nb), ("has_range", range is not None))
        return _ops.apply(_edges_impl, (a, lo, hi), st, weak_ref=(0,))
    sb = _ops.shape_of(bins)
    if len(sb) != 1 or sb[0] < 1:
        raise ValueError(
            f"{name}: bins must be an int or a non-empty 1-D array of edges, got "
            f"shape {sb}"
        )
    return _ops.apply(_as_edges, (a, bins))


def _as_edges(a: Any, bins: Any) -> Any:
    d = _c.inexact_dtype(a, bins)
    return _ops.as_tracer(bins, d)


def histogram_bin_edges(
    a: Any, bins: Any = 10, range: Any = None, weights: Any = None
) -> Any:
    """The bin edges :func:`histogram` uses: ``bins`` + 1 evenly spaced
    over ``range`` (default a's min and max, widened by 0.5 if equal), or
    the given edges.

    >>> bnp.histogram_bin_edges(bnp.array([0.0, 1.0, 4.0]), bins=2)   # [0., 2., 4.]
    """
    return _bins_edges("histogram_bin_edges", a, bins, range)


def _histogram_impl(
    a: Any, edges: Any, weights: Any, *, has_weights: bool, density: bool
) -> Any:
    e = _ops.as_tracer(edges)
    ed = np.dtype(e.dtype)
    t = lax.reshape(lax.astype(_ops.as_tracer(a), ed), (-1,))
    nb = e.shape[0] - 1
    idx = _search(e, t, True)
    last = lax.reshape(lax.slice(e, [nb], [nb + 1]), ())
    idx = lax.select(lax.eq(t, last), nb, idx)  # the last bin is closed
    if has_weights:
        wt = lax.reshape(_ops.as_tracer(weights), (-1,))
        cd = _c.inexact_dtype(wt)
        wt = lax.astype(wt, cd)
    else:
        cd = ed if _ops.is_float(ed) else _c.F32
        wt = lax.full(tuple(t.shape), 1, cd)
    counts = lax.scatter(lax.full((nb + 2,), 0, cd), idx, wt, 0, "add")
    counts = lax.slice(counts, [1], [nb + 1])
    if density:
        width = lax.astype(
            lax.sub(lax.slice(e, [1], [nb + 1]), lax.slice(e, [0], [nb])), cd
        )
        counts = lax.true_divide(lax.true_divide(counts, lax.sum(counts)), width)
    return counts, e


def histogram(
    a: Any,
    bins: Any = 10,
    range: Any = None,
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, Any]:
    """(counts, bin_edges): the number (or summed ``weights``) of a's
    elements in each bin [e_i, e_i+1) (the last bin closed); values outside
    are dropped. Counts are floats as in JAX; ``density`` normalizes them
    so that they integrate to 1.

    >>> bnp.histogram(bnp.array([0.0, 1.0, 1.0, 4.0]), bins=2)
    (Array([3., 1.], dtype=float32), Array([0., 2., 4.], dtype=float32))
    """
    if weights is not None and _ops.shape_of(weights) != _ops.shape_of(a):
        raise ValueError(
            f"histogram: weights must have a's shape {_ops.shape_of(a)}, got "
            f"{_ops.shape_of(weights)}"
        )
    edges = _bins_edges("histogram", a, bins, range)
    st = (("has_weights", weights is not None), ("density", bool(density)))
    return _ops.apply(
        _histogram_impl, (a, edges, 0 if weights is None else weights), st
    )


# ---- cov / corrcoef ----


def _rows(t: Any, rowvar: bool) -> Any:
    if len(t.shape) == 1:
        return lax.reshape(t, (1, t.shape[0]))
    if not rowvar and t.shape[0] != 1:
        return lax.transpose(t, (1, 0))
    return t


def _cov_impl(
    m: Any,
    y: Any,
    fw: Any,
    aw: Any,
    *,
    has_y: bool,
    rowvar: bool,
    ddof: int,
    has_fw: bool,
    has_aw: bool,
) -> Any:
    d = _c.inexact_dtype(m, y) if has_y else _c.inexact_dtype(m)
    wd = _c.work_dtype(d)
    x = _rows(lax.astype(_ops.as_tracer(m), wd), rowvar)
    if has_y:
        x = lax.concatenate([x, _rows(lax.astype(_ops.as_tracer(y), wd), rowvar)], 0)
    n = x.shape[1]
    w = None
    if has_fw:
        w = lax.astype(_ops.as_tracer(fw), wd)
    if has_aw:
        a = lax.astype(_ops.as_tracer(aw), wd)
        w = a if w is None else lax.mul(w, a)
    if w is None:
        avg = lax.true_divide(lax.sum(x, (1,), True), float(n))
        fact = lax.full((), float(n - ddof), wd)
        dev = lax.sub(x, avg)
        xw = dev
    else:
        w_sum = lax.sum(w)
        avg = lax.true_divide(lax.sum(lax.mul(x, w), (1,), True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif not has_aw:
            fact = lax.sub(w_sum, float(ddof))
        else:
            a = lax.astype(_ops.as_tracer(aw), wd)
            fact = lax.sub(
                w_sum,
                lax.mul(float(ddof), lax.true_divide(lax.sum(lax.mul(w, a)), w_sum)),
            )
        dev = lax.sub(x, avg)
        xw = lax.mul(dev, w)
    fact = lax.maximum(fact, 0.0)
    c = lax.true_divide(lax.dot_general(xw, dev, (((1,), (1,)), ((), ()))), fact)
    if c.shape == (1, 1):
        c = lax.reshape(c, ())
    return _c.down(c, d)


def _cov_check(
    name: str, m: Any, y: Any, rowvar: bool, fweights: Any, aweights: Any
) -> int:
    sm = _ops.shape_of(m)
    if len(sm) > 2 or len(sm) == 0:
        raise ValueError(f"{name}: m must be 1-D or 2-D, got shape {sm}")
    nobs = sm[-1] if (len(sm) == 1 or rowvar or sm[0] == 1) else sm[0]
    if y is not None:
        sy = _ops.shape_of(y)
        if len(sy) > 2 or len(sy) == 0:
            raise ValueError(f"{name}: y must be 1-D or 2-D, got shape {sy}")
        ny = sy[-1] if (len(sy) == 1 or rowvar or sy[0] == 1) else sy[0]
        if ny != nobs:
            raise ValueError(
                f"{name}: m and y must have the same number of observations "
                f"({nobs} and {ny})"
            )
    for what, wv in (("fweights", fweights), ("aweights", aweights)):
        if wv is None:
            continue
        sw = _ops.shape_of(wv)
        if len(sw) != 1:
            raise ValueError(f"{name}: {what} must be 1-D, got shape {sw}")
        if sw[0] != nobs:
            raise ValueError(
                f"{name}: {what} has {sw[0]} values for {nobs} observations"
            )
    if fweights is not None:
        dw = _ops.result_dtype(fweights)
        if not _ops.is_int(dw):
            raise TypeError(f"{name}: fweights must be integers, not {dw.name}")
    return nobs


def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: Any = None,
    aweights: Any = None,
) -> Any:
    """The covariance matrix of the variables in the rows of m (columns if
    not ``rowvar``), with y's stacked under; normalized by N - 1 (N with
    ``bias``, N - ddof), optionally with frequency/analytic weights. A
    single variable gives a 0-d array. Integers give float32.

    >>> bnp.cov(bnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))   # [[1, -1], [-1, 1]]
    """
    _cov_check("cov", m, y, rowvar, fweights, aweights)
    if ddof is None:
        ddof = 0 if bias else 1
    ddof = operator.index(ddof)
    st = (
        ("has_y", y is not None),
        ("rowvar", bool(rowvar)),
        ("ddof", ddof),
        ("has_fw", fweights is not None),
        ("has_aw", aweights is not None),
    )
    args = (
        m,
        0 if y is None else y,
        0 if fweights is None else fweights,
        0 if aweights is None else aweights,
    )
    return _ops.apply(_cov_impl, args, st)


def _corrcoef_impl(m: Any, y: Any, *, has_y: bool, rowvar: bool) -> Any:
    c = _cov_impl(
        m, y, 0, 0, has_y=has_y, rowvar=rowvar, ddof=1, has_fw=False, has_aw=False
    )
    d = np.dtype(c.dtype)
    w = _c.work_dtype(d)
    c = lax.astype(c, w)
    if not c.shape:
        return _c.down(lax.true_divide(c, c), d)
    k = c.shape[0]
    eye = lax.eq(lax.iota(np.int32, (k, k), 0), lax.iota(np.int32, (k, k), 1))
    diag = lax.sum(lax.select(eye, c, lax.full((), 0, w)), (1,))
    sd = lax.sqrt(diag)
    c = lax.true_divide(
        lax.true_divide(c, lax.reshape(sd, (k, 1))), lax.reshape(sd, (1, k))
    )
    c = lax.maximum(lax.minimum(c, 1.0), -1.0)  # NaN stays NaN
    return _c.down(c, d)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients: cov normalized by the standard
    deviations, clipped to [-1, 1].

    >>> bnp.corrcoef(bnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    Array([[ 1., -1.],
           [-1.,  1.]], dtype=float32)
    """
    _cov_check("corrcoef", x, y, rowvar, None, None)
    st = (("has_y", y is not None), ("rowvar", bool(rowvar)))
    return _ops.apply(_corrcoef_impl, (x, 0 if y is None else y), st)
