"""``baton.numpy`` functions written over the whole of ``baton.numpy``
and ``bt.lax`` / ``bt.scipy`` (a layer above baton.numpy's modules):
``i0``, ``kaiser``, ``nextafter``, ``spacing``, ``polyfit``,
``histogramdd``, ``histogram2d``. Importing this module
(``baton/__init__.py`` does) adds them to ``baton.numpy``."""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

import baton.numpy as bnp
from baton import lax as _lax
from baton._custom import custom_jvp
from baton.scipy import special as _special

builtins_range = builtins.range

__all__ = [
    "histogram2d", "histogramdd", "i0", "kaiser", "nextafter", "polyfit", "spacing"
]


def _inexact(x: Any) -> Any:
    x = bnp.asarray(x)
    if not bnp.issubdtype(x.dtype, bnp.inexact):
        x = x.astype(bnp.float32)
    return x


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0
    (``exp(|x|) * i0e(x)``; integers give float32)."""
    x = _inexact(x)
    if bnp.issubdtype(x.dtype, bnp.complexfloating):
        raise ValueError("i0: complex input is not supported (as in JAX)")
    return _i0(x)


@custom_jvp
def _i0(x: Any) -> Any:
    return _special.i0(x)


@_i0.defjvp
def _i0_jvp(primals: Any, tangents: Any) -> Any:
    # d/dx i0(x) = i1(x) (0 at 0, where exp(|x|)'s kink would give 1).
    (x,), (t,) = primals, tangents
    return _i0(x), t * _special.i1(x)


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window of ``M`` points with shape parameter ``beta``."""
    M = operator.index(M)
    if M <= 1:
        return bnp.ones(max(M, 0), bnp.float32) if M <= 0 else bnp.ones(1, bnp.float32)
    n = bnp.arange(M, dtype=bnp.float32)
    alpha = 0.5 * (M - 1)
    beta = _inexact(beta)
    return i0(beta * bnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


def nextafter(x1: Any, x2: Any, /) -> Any:
    """The next representable value after ``x1`` towards ``x2``, elementwise
    (promoted to a common floating dtype)."""
    a, b = _inexact(x1), _inexact(x2)
    d = bnp.result_type(a, b)
    return _lax.nextafter(a.astype(d), b.astype(d))


def spacing(x: Any, /) -> Any:
    """The distance from ``x`` to the next representable value away from
    zero (negative for negative ``x``), as JAX computes it."""
    x = _inexact(x)
    if bnp.issubdtype(x.dtype, bnp.complexfloating):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = bnp.asarray(np.inf, x.dtype)
    if x.dtype == bnp.float16:
        return _lax.nextafter(x, bnp.broadcast_to(inf, x.shape)) - x
    result = _lax.nextafter(x, bnp.copysign(inf, x)) - x
    tiny = np.asarray(bnp.finfo(x.dtype).smallest_subnormal, x.dtype)
    return bnp.where(result == 0, bnp.copysign(tiny, x), result)



def polyfit(
    x: Any,
    y: Any,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: Any = None,
    cov: Any = False,
) -> Any:
    """The least-squares polynomial of degree ``deg`` through ``(x, y)``
    (``y`` 1-D or one column per fit), highest power first, as JAX
    computes it (columns of the Vandermonde matrix scaled to unit norm,
    ``lstsq``); ``full`` also returns (residuals, rank, singular values,
    rcond), ``cov`` the coefficients' covariance ("unscaled" unscaled)."""
    x = bnp.asarray(x)
    y = bnp.asarray(y)
    deg = operator.index(deg)
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    x, y = _inexact(x), _inexact(y)
    if rcond is None:
        rcond = len(x) * float(bnp.finfo(x.dtype).eps)
    rcond = float(rcond)
    lhs = bnp.vander(x, order)
    rhs = y
    if w is not None:
        w = _inexact(w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = bnp.sqrt(bnp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = bnp.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, bnp.asarray(rcond, x.dtype)
    if cov:
        vbase = bnp.linalg.inv(lhs.T @ lhs) / bnp.outer(scale, scale)
        if cov == "unscaled":
            fac = bnp.asarray(1.0, vbase.dtype)
        else:
            if len(x) <= order:
                raise ValueError(
                    "the number of data points must exceed order to scale the "
                    "covariance matrix"
                )
            fac = resids / (len(x) - order)
        if y.ndim == 1:
            return c, vbase * bnp.atleast_1d(fac)[None]
        return c, vbase[:, :, None] * bnp.atleast_1d(fac)[None, None, :]
    return c


def histogramdd(
    sample: Any,
    bins: Any = 10,
    range: Any = None,  # noqa: A002 -- numpy's name
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, list[Any]]:
    """The D-dimensional histogram of the (N, D) ``sample``: counts (or
    weight sums, or a density) per bin, and each dimension's bin edges;
    ``bins`` an int, or one int / edge array per dimension."""
    sample = bnp.asarray(sample)
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got shape {tuple(sample.shape)}")
    d = sample.shape[1]
    if weights is not None:
        weights = bnp.asarray(weights)
    idx_by_dim = []
    edges_by_dim = []
    if isinstance(bins, (list, tuple)) and len(bins) != d:
        raise ValueError(f"histogramdd: {len(bins)} bins for {d} dimensions")
    for i in builtins_range(d):
        range_i = None if range is None else range[i]
        bins_i = bins if isinstance(bins, int) else bins[i]
        edges = bnp.histogram_bin_edges(sample[:, i], bins_i, range_i, weights)
        idx = bnp.searchsorted(edges, sample[:, i], side="right")
        idx = bnp.where(sample[:, i] == edges[-1], idx - 1, idx)
        idx_by_dim.append(idx)
        edges_by_dim.append(edges)
    nbins = tuple(int(e.shape[0]) + 1 for e in edges_by_dim)
    flat = bnp.ravel_multi_index(tuple(idx_by_dim), nbins, mode="clip")
    total = int(np.prod(nbins))
    hist = bnp.bincount(flat, weights, length=total).reshape(nbins)
    hist = hist[(slice(1, -1),) * d]
    if density:
        hist = hist.astype(sample.dtype)
        hist = hist / hist.sum()
        for k in builtins_range(d):
            shape = [1] * d
            shape[k] = int(edges_by_dim[k].shape[0]) - 1
            hist = hist / bnp.diff(edges_by_dim[k]).reshape(shape)
    return hist, edges_by_dim


def histogram2d(
    x: Any,
    y: Any,
    bins: Any = 10,
    range: Any = None,  # noqa: A002 -- numpy's name
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, Any, Any]:
    """The 2-D histogram of points ``(x[i], y[i])``: (counts, x edges,
    y edges); ``bins`` an int, a pair, or one edge array for both."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        edges = bnp.asarray(bins)
        bins = [edges, edges]
    sample = bnp.stack([bnp.ravel(bnp.asarray(x)), bnp.ravel(bnp.asarray(y))], axis=1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


for _name in __all__:
    setattr(bnp, _name, globals()[_name])
    if _name not in bnp.__all__:
        bnp.__all__.append(_name)
del _name
