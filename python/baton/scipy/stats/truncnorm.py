"""The truncated normal distribution (``jax.scipy.stats.truncnorm``):
``a`` and ``b`` are the bounds in standard units, as in scipy. The mass
``Phi(b) - Phi(a)`` is taken in log space from whichever tail is
accurate, as JAX."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats import norm
from baton.scipy.stats._functions import bnp, inexact, public, special


def _log_diff(x: Any, y: Any) -> Any:
    """``log(exp(x) - exp(y))`` (NaN where negative), as a signed
    logsumexp."""
    n = bnp()
    m = n.maximum(x, y)
    m = n.where(n.isfinite(m), m, 0.0)
    s = n.exp(x - m) - n.exp(y - m)
    return n.where(s < 0, np.nan, n.log(n.abs(s)) + m)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    n = bnp()
    s = special()
    a, b = n.broadcast_arrays(a, b)
    left = b <= 0
    right = a > 0
    central = ~(left | right)
    a_tail = n.where(right, -b, a)
    b_tail = n.where(right, -a, b)
    tail = _log_diff(s.log_ndtr(b_tail), s.log_ndtr(a_tail))
    mid = n.log1p(-s.ndtr(a) - s.ndtr(-b))
    return n.where(central, mid, tail)


def _logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    n = bnp()
    val = norm._logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    xs = (x - loc) / scale
    val = n.where((xs < a) | (xs > b), -np.inf, val)
    return n.where(a >= b, np.nan, val)


def _pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, a, b, loc, scale))


def _logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    n = bnp()
    x, a, b = n.broadcast_arrays(x, a, b)
    x = (x - loc) / scale
    lgm = _log_gauss_mass(a, b)
    lcdf = _log_gauss_mass(a, x) - lgm
    lsf = _log_gauss_mass(x, b) - lgm
    # jnp.select's order: the first condition that holds wins.
    out = n.where(x > a, lcdf, 0.0)
    out = n.where(lcdf > -0.1, n.log1p(-n.exp(lsf)), out)
    out = n.where(x <= a, -np.inf, out)
    out = n.where(x >= b, 0.0, out)
    return n.where(a >= b, np.nan, out)


def _cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logcdf(x, a, b, loc, scale))


def _logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    return _logcdf(-x, -b, -a, -loc, scale)


def _sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logsf(x, a, b, loc, scale))


logpdf = public(
    _logpdf,
    "Log of the density of the normal(loc, scale) truncated to "
    "``[a, b]`` (standard units); ``-inf`` outside, NaN for ``a >= b``.",
)
pdf = public(_pdf, "The truncated normal density.")
logcdf = public(_logcdf, "Log of the truncated normal CDF.")
cdf = public(_cdf, "The truncated normal CDF.")
logsf = public(_logsf, "Log of the truncated normal survival function.")
sf = public(_sf, "The truncated normal survival function.")
