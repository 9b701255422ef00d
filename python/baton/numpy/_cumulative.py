"""Cumulative sums and products (cumsum, cumprod, cumulative_sum,
cumulative_prod, nancumsum, nancumprod) and differences (diff, ediff1d,
gradient, trapezoid).

The scans are log-depth (Hillis-Steele): ceil(log2(n)) steps, each adding
(or multiplying) the array shifted by 1, 2, 4, ... along the axis (a
``lax.pad`` that crops). That is O(n log n) work but only log2(n) fused
elementwise ops, not a loop over elements, with O(n) memory; each prefix is
combined as a balanced tree, so the float error grows as O(log n) like
pairwise summation (a sequential ``lax.scan`` grows as O(n) and runs n
steps). Integer results are exact (wrapping as numpy's). Result dtypes are
jax.numpy's: bool gives int32, other dtypes keep theirs (float16/bfloat16
are accumulated in float32 and rounded once).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from baton import _ops
from baton._baton import Array, lax
from baton.numpy import _elementwise, _shapes
from baton.numpy import _operands as _c

Tracer = lax.Tracer

__all__ = [
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "ediff1d",
    "gradient",
    "nancumprod",
    "nancumsum",
    "trapezoid",
    "unwrap",
]


def _slice(t: Any, axis: int, start: int, stop: int) -> Any:
    shape = tuple(t.shape)
    lo = [0] * len(shape)
    hi = list(shape)
    lo[axis], hi[axis] = start, stop
    return lax.slice(t, lo, hi)


def _shift(t: Any, axis: int, k: int, fill: Any) -> Any:
    """t moved k places along axis toward the end, ``fill`` coming in."""
    nd = len(t.shape)
    low = [0] * nd
    high = [0] * nd
    low[axis], high[axis] = k, -k
    return lax.pad(t, lax.full((), fill, t.dtype), low, high)


def _scan(t: Any, axis: int, prod: bool) -> Any:
    n = t.shape[axis]
    op = lax.mul if prod else lax.add
    k = 1
    while k < n:
        t = op(t, _shift(t, axis, k, 1 if prod else 0))
        k *= 2
    return t


def _cum_dtype(d: np.dtype, dtype: np.dtype | None) -> np.dtype:
    if dtype is not None:
        return dtype
    return _c.I32 if d == _c.BOOL else d


def _cum_impl(
    a: Any, *, axis: int | None, dtype: Any, prod: bool, nan: bool, initial: bool
) -> Any:
    t = _ops.as_tracer(a)
    if axis is None:
        t = lax.reshape(t, (-1,))
        axis = 0
    d = np.dtype(t.dtype)
    if nan and _ops.is_float(d):
        t = lax.select(lax.ne(t, t), lax.full((), 1 if prod else 0, d), t)
    out = _cum_dtype(d, dtype)
    w = _c.work_dtype(out)
    t = _c.down(t, w)
    r = _scan(t, axis, prod)
    if initial:
        nd = len(r.shape)
        low = [0] * nd
        low[axis] = 1
        r = lax.pad(r, lax.full((), 1 if prod else 0, r.dtype), low, [0] * nd)
    return _c.down(r, out)


def _cumulative(
    name: str,
    a: Any,
    axis: Any,
    dtype: Any,
    prod: bool,
    nan: bool,
    initial: bool = False,
    strict_axis: bool = False,
) -> Any:
    nd = _c.ndim_of(a)
    if strict_axis:
        if nd == 0:
            raise ValueError(f"{name}: x must have at least one dimension")
        if axis is None:
            if nd > 1:
                raise ValueError(
                    f"{name}: axis must be given for an array of {nd} dimensions "
                    "(it is optional only for 1-D arrays)"
                )
            axis = 0
    ax = None if axis is None else _ops.normalize_axis(axis, nd)
    st = (
        ("axis", ax),
        ("dtype", _c.dtype_arg(dtype)),
        ("prod", prod),
        ("nan", nan),
        ("initial", bool(initial)),
    )
    return _ops.apply(_cum_impl, (a,), st)


def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
    """Cumulative sum along ``axis`` (None: of the flattened array), as a
    log-depth scan (module docstring); bool gives int32.

    >>> bnp.cumsum(bnp.array([1, 2, 3]))   # [1, 3, 6]
    """
    _c.no_out("cumsum", out)
    return _cumulative("cumsum", a, axis, dtype, False, False)


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
    """Cumulative product along ``axis`` (None: flattened), log-depth scan.

    >>> bnp.cumprod(bnp.array([1, 2, 3]))   # [1, 2, 6]
    """
    _c.no_out("cumprod", out)
    return _cumulative("cumprod", a, axis, dtype, True, False)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
    """Cumulative sum treating NaN as 0.

    >>> bnp.nancumsum(bnp.array([1.0, bnp.nan, 2.0]))   # [1., 1., 3.]
    """
    _c.no_out("nancumsum", out)
    return _cumulative("nancumsum", a, axis, dtype, False, True)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: None = None) -> Any:
    """Cumulative product treating NaN as 1.

    >>> bnp.nancumprod(bnp.array([2.0, bnp.nan, 3.0]))   # [2., 2., 6.]
    """
    _c.no_out("nancumprod", out)
    return _cumulative("nancumprod", a, axis, dtype, True, True)


def cumulative_sum(
    x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    """The array API's cumulative sum: ``axis`` may be omitted only for 1-D
    x; ``include_initial`` puts a leading 0.

    >>> bnp.cumulative_sum(bnp.array([1, 2, 3]), include_initial=True)   # [0, 1, 3, 6]
    """
    return _cumulative(
        "cumulative_sum", x, axis, dtype, False, False, include_initial, True
    )


def cumulative_prod(
    x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    """The array API's cumulative product (see :func:`cumulative_sum`).

    >>> bnp.cumulative_prod(bnp.array([1, 2, 3]), include_initial=True)   # [1, 1, 2, 6]
    """
    return _cumulative(
        "cumulative_prod", x, axis, dtype, True, False, include_initial, True
    )


# ---- differences ----


def _diff1(t: Any, axis: int) -> Any:
    n = t.shape[axis]
    hi, lo = _slice(t, axis, 1, n), _slice(t, axis, 0, n - 1)
    if t.dtype == _c.BOOL:
        return lax.ne(hi, lo)
    return lax.sub(hi, lo)


def _diff_impl(
    a: Any, pre: Any, app: Any, *, n: int, axis: int, has_pre: bool, has_app: bool
) -> Any:
    d = _ops.result_dtype(a, *([pre] if has_pre else []), *([app] if has_app else []))
    t = _ops.as_tracer(a, d)
    shape = tuple(t.shape)
    parts = []
    for has, v in ((has_pre, pre), (has_app, app)):
        if not has:
            parts.append(None)
            continue
        v = _ops.as_tracer(v, d)
        if len(v.shape) == 0:
            s = list(shape)
            s[axis] = 1
            v = lax.broadcast_to(v, tuple(s))
        parts.append(v)
    ops = [p for p in (parts[0], t, parts[1]) if p is not None]
    if len(ops) > 1:
        t = lax.concatenate(ops, axis)
    for _ in range(n):
        t = _diff1(t, axis)
    return t


def diff(
    a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None
) -> Any:
    """The n-th discrete difference along ``axis``: a[1:] - a[:-1], n
    times (bool: a[1:] != a[:-1]); ``prepend``/``append`` (scalars or
    arrays) are joined along the axis first.

    >>> bnp.diff(bnp.array([1, 4, 9, 16]), n=2)   # [2, 2]
    """
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    shape = _ops.shape_of(a)
    if not shape:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _ops.normalize_axis(axis, len(shape))
    for what, v in (("prepend", prepend), ("append", append)):
        if v is not None:
            vs = _ops.shape_of(v)
            if vs and (
                len(vs) != len(shape)
                or any(vs[k] != shape[k] for k in range(len(shape)) if k != ax)
            ):
                raise ValueError(
                    f"diff: {what} of shape {vs} does not match a of shape {shape} "
                    f"except along axis {ax}"
                )
    if n == 0:
        return _ops.apply(
            _diff_impl,
            (a, 0, 0),
            (("n", 0), ("axis", ax), ("has_pre", False), ("has_app", False)),
        )
    total = shape[ax] + sum(
        (1 if not _ops.shape_of(v) else _ops.shape_of(v)[ax])
        for v in (prepend, append)
        if v is not None
    )
    n = min(n, total)
    st = (
        ("n", n),
        ("axis", ax),
        ("has_pre", prepend is not None),
        ("has_app", append is not None),
    )
    return _ops.apply(
        _diff_impl,
        (a, 0 if prepend is None else prepend, 0 if append is None else append),
        st,
        weak_ref=(0,),
    )


def _ediff1d_impl(
    a: Any, begin: Any, end: Any, *, has_begin: bool, has_end: bool
) -> Any:
    t = _ops.as_tracer(a)
    t = lax.reshape(t, (-1,))
    d = np.dtype(t.dtype)
    r = _diff1(t, 0)
    parts = []
    if has_begin:
        parts.append(lax.reshape(_ops.as_tracer(begin, d), (-1,)))
    parts.append(r)
    if has_end:
        parts.append(lax.reshape(_ops.as_tracer(end, d), (-1,)))
    return lax.concatenate(parts, 0) if len(parts) > 1 else r


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive elements of the flattened array, with
    ``to_begin``/``to_end`` (converted to its dtype) at the ends.

    >>> bnp.ediff1d(bnp.array([1, 2, 4, 7]), to_begin=0)   # [0, 1, 2, 3]
    """
    if _ops.result_dtype(ary) == _c.BOOL:
        raise TypeError("ediff1d: not defined for bool arrays; convert to int first")
    st = (("has_begin", to_begin is not None), ("has_end", to_end is not None))
    return _ops.apply(
        _ediff1d_impl,
        (ary, 0 if to_begin is None else to_begin, 0 if to_end is None else to_end),
        st,
        weak_ref=(0,),
    )


def _grad_axis(f: Any, h: Any, axis: int, coords: bool, edge_order: int) -> Any:
    n = f.shape[axis]

    def s(a: int, b: int) -> Any:
        return _slice(f, axis, a, b)

    nd = len(f.shape)

    def along(v: Any) -> Any:  # a 1-D coordinate vector against f's axis
        shape = [1] * nd
        shape[axis] = v.shape[0]
        return lax.reshape(v, shape)

    if not coords:
        inner = lax.true_divide(lax.sub(s(2, n), s(0, n - 2)), lax.mul(h, 2.0))
        if edge_order == 1:
            first = lax.true_divide(lax.sub(s(1, 2), s(0, 1)), h)
            last = lax.true_divide(lax.sub(s(n - 1, n), s(n - 2, n - 1)), h)
        else:
            first = lax.true_divide(
                lax.add(
                    lax.sub(lax.mul(s(1, 2), 4.0), lax.mul(s(0, 1), 3.0)),
                    lax.neg(s(2, 3)),
                ),
                lax.mul(h, 2.0),
            )
            last = lax.true_divide(
                lax.sub(
                    lax.add(lax.mul(s(n - 1, n), 3.0), s(n - 3, n - 2)),
                    lax.mul(s(n - 2, n - 1), 4.0),
                ),
                lax.mul(h, 2.0),
            )
    else:
        dx = lax.sub(lax.slice(h, [1], [n]), lax.slice(h, [0], [n - 1]))
        dx1, dx2 = (
            along(lax.slice(dx, [0], [n - 2])),
            along(lax.slice(dx, [1], [n - 1])),
        )
        s12 = lax.add(dx1, dx2)
        ca = lax.neg(lax.true_divide(dx2, lax.mul(dx1, s12)))
        cb = lax.true_divide(lax.sub(dx2, dx1), lax.mul(dx1, dx2))
        cc = lax.true_divide(dx1, lax.mul(dx2, s12))
        inner = lax.add(
            lax.add(lax.mul(ca, s(0, n - 2)), lax.mul(cb, s(1, n - 1))),
            lax.mul(cc, s(2, n)),
        )
        dxv = along(dx)
        if edge_order == 1:
            first = lax.true_divide(lax.sub(s(1, 2), s(0, 1)), _slice(dxv, axis, 0, 1))
            last = lax.true_divide(
                lax.sub(s(n - 1, n), s(n - 2, n - 1)), _slice(dxv, axis, n - 2, n - 1)
            )
        else:
            a1, a2 = _slice(dxv, axis, 0, 1), _slice(dxv, axis, 1, 2)
            t12 = lax.add(a1, a2)
            first = lax.add(
                lax.add(
                    lax.mul(
                        lax.neg(
                            lax.true_divide(
                                lax.add(lax.mul(a1, 2.0), a2), lax.mul(a1, t12)
                            )
                        ),
                        s(0, 1),
                    ),
                    lax.mul(lax.true_divide(t12, lax.mul(a1, a2)), s(1, 2)),
                ),
                lax.mul(lax.neg(lax.true_divide(a1, lax.mul(a2, t12))), s(2, 3)),
            )
            b1, b2 = _slice(dxv, axis, n - 3, n - 2), _slice(dxv, axis, n - 2, n - 1)
            u12 = lax.add(b1, b2)
            last = lax.add(
                lax.add(
                    lax.mul(lax.true_divide(b2, lax.mul(b1, u12)), s(n - 3, n - 2)),
                    lax.mul(
                        lax.neg(lax.true_divide(u12, lax.mul(b1, b2))), s(n - 2, n - 1)
                    ),
                ),
                lax.mul(
                    lax.true_divide(lax.add(lax.mul(b2, 2.0), b1), lax.mul(b2, u12)),
                    s(n - 1, n),
                ),
            )
    if n == 2:
        return lax.concatenate([first, last], axis)
    return lax.concatenate([first, inner, last], axis)


def _gradient_impl(
    f: Any,
    *spacing: Any,
    axes: tuple[int, ...],
    coords: tuple[bool, ...],
    edge_order: int,
) -> Any:
    d = _c.inexact_dtype(f)
    w = _c.work_dtype(d)
    t = lax.astype(_ops.as_tracer(f), w)
    outs = []
    for ax, h, c in zip(axes, spacing, coords):
        ht = lax.astype(_ops.as_tracer(h), w)
        outs.append(_c.down(_grad_axis(t, ht, ax, c, edge_order), d))
    return tuple(outs)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """The gradient of f by central differences inside and one-sided ones
    (of order ``edge_order``, 1 or 2) at the ends; ``varargs`` are the
    spacings: none (1), one for all axes, or one per axis (a scalar or the
    coordinates, a 1-D array). One array per axis (a list), or one array
    for a single axis. Integers give float32.

    >>> bnp.gradient(bnp.array([1.0, 2.0, 4.0, 7.0]))   # [1., 1.5, 2.5, 3.]
    """
    shape = _ops.shape_of(f)
    nd = len(shape)
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    axes = (
        tuple(range(nd))
        if axis is None
        else tuple(
            _ops.normalize_axis(a, nd)
            for a in (axis if isinstance(axis, (tuple, list)) else (axis,))
        )
    )
    if len(set(axes)) != len(axes):
        raise ValueError(f"gradient: repeated axis in {axis}")
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and not _ops.shape_of(varargs[0]):
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(
            f"gradient: invalid number of spacing arguments ({len(varargs)}); give "
            f"none, one scalar, or one per axis ({len(axes)})"
        )
    coords = []
    for ax, h in zip(axes, spacing):
        hs = _ops.shape_of(h)
        if shape[ax] < edge_order + 1:
            raise ValueError(
                "gradient: shape of array too small to calculate a numerical "
                f"gradient, at least edge_order + 1 = {edge_order + 1} elements "
                f"are required along axis {ax} (it has {shape[ax]})"
            )
        if hs and (len(hs) != 1 or hs[0] != shape[ax]):
            raise ValueError(
                f"gradient: the spacing for axis {ax} must be a scalar or 1-D of "
                f"length {shape[ax]}, got shape {hs}"
            )
        coords.append(bool(hs))
    out = _ops.apply(
        _gradient_impl,
        (f, *spacing),
        (("axes", axes), ("coords", tuple(coords)), ("edge_order", int(edge_order))),
    )
    return out[0] if len(out) == 1 else list(out)


def _trapezoid_impl(y: Any, x: Any, *, axis: int, mode: str) -> Any:
    d = _c.inexact_dtype(y, x) if mode != "dx" else _c.inexact_dtype(y)
    w = _c.work_dtype(d)
    t = lax.astype(_ops.as_tracer(y), w)
    n = t.shape[axis]
    if n < 2:
        s = list(t.shape)
        del s[axis]
        return lax.full(tuple(s), 0, d)
    avg = lax.mul(lax.add(_slice(t, axis, 1, n), _slice(t, axis, 0, n - 1)), 0.5)
    xt = lax.astype(_ops.as_tracer(x), w)
    if mode == "dx":
        h = xt
    else:
        if mode == "x1d":
            shape = [1] * len(t.shape)
            shape[axis] = n
            xt = lax.reshape(xt, shape)
        h = _diff1(xt, axis)
    return _c.down(lax.sum(lax.mul(avg, h), (axis,)), d)


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of y along ``axis`` by the trapezoidal rule, at sample
    points ``x`` (1-D, or y's shape) or with uniform spacing ``dx``.

    >>> bnp.trapezoid(bnp.array([1.0, 2.0, 3.0]), dx=0.5)   # 2.0
    """
    shape = _ops.shape_of(y)
    if not shape:
        raise ValueError("trapezoid: y must have at least one dimension")
    ax = _ops.normalize_axis(axis, len(shape))
    if x is None:
        mode, x = "dx", dx
        if _ops.shape_of(dx):
            raise ValueError("trapezoid: dx must be a scalar; pass sample points as x")
    else:
        xs = _ops.shape_of(x)
        if len(xs) == 1 and len(shape) != 1:
            mode = "x1d"
            if xs[0] != shape[ax]:
                raise ValueError(
                    f"trapezoid: x of length {xs[0]} does not match y's axis {ax} "
                    f"(length {shape[ax]})"
                )
        elif xs == shape:
            mode = "x"
        else:
            raise ValueError(
                f"trapezoid: x must be 1-D of length {shape[ax]} or have y's shape "
                f"{shape}, got shape {xs}"
            )
    return _ops.apply(_trapezoid_impl, (y, x), (("axis", ax), ("mode", mode)))


_ = math


# ---- unwrap ----


def _unwrap_impl(p: Any, *, axis: int, discont: Any, period: float) -> Any:
    t, d = _c.inexact(p)
    t = t[0]
    n = t.shape[axis]
    if n < 2:
        return _c.down(t, d)
    wd = np.dtype(t.dtype)
    x = _shapes.moveaxis(t, axis, -1)
    dd = diff(x, axis=-1)
    half = period / 2
    lo = -half
    ddmod = _elementwise.mod(dd - lo, period) + lo
    # A jump of exactly half a period keeps its sign (numpy's rule).
    ddmod = _elementwise.where((ddmod == lo) & (dd > 0), half, ddmod)
    lim = half if discont is None else max(discont, half)
    corr = _elementwise.where(_elementwise.abs(dd) < lim, 0, ddmod - dd)
    corr = cumsum(corr, axis=-1).astype(wd)
    out = _shapes.concatenate([x[..., :1], x[..., 1:] + corr], axis=-1)
    return _c.down(_shapes.moveaxis(out, -1, axis), d)


def unwrap(
    p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * math.pi
) -> Any:
    """``p`` with jumps larger than ``max(discont, period/2)`` along ``axis``
    replaced by their complement mod ``period`` (floats)."""
    nd = _c.ndim_of(p)
    if nd == 0:
        raise ValueError("unwrap: `p` must have at least one dimension")
    ax = _ops.normalize_axis(axis, nd)
    for nm, v in (("discont", discont), ("period", period)):
        if isinstance(v, (Array, Tracer)):
            raise TypeError(f"unwrap: `{nm}` must be a Python number in baton")
    return _ops.apply(
        _unwrap_impl,
        (p,),
        (
            ("axis", ax),
            ("discont", None if discont is None else float(discont)),
            ("period", float(period)),
        ),
    )
