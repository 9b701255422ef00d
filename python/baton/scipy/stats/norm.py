"""The normal distribution (``jax.scipy.stats.norm``)."""

from __future__ import annotations

import math
from typing import Any

from baton.scipy.stats._functions import bnp, inexact, public, special


def _logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    s2 = scale * scale
    return (bnp().log((2 * math.pi) * s2) + (x - loc) * (x - loc) / s2) / -2.0


def _pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, loc, scale))


def _cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return special().ndtr((x - loc) / scale)


def _logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return special().log_ndtr((x - loc) / scale)


def _sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return _cdf(-x, -loc, scale)


def _logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return _logcdf(-x, -loc, scale)


def _ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = inexact(q, loc, scale)
    return special().ndtri(q) * scale + loc


def _isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = inexact(q, loc, scale)
    return _ppf(1.0 - q, loc, scale)


logpdf = public(
    _logpdf, "Log of the normal density with mean ``loc`` and s.d. ``scale``."
)
pdf = public(_pdf, "The normal density with mean ``loc`` and s.d. ``scale``.")
cdf = public(_cdf, "The normal cumulative distribution function.")
logcdf = public(_logcdf, "Log of the normal CDF (accurate in the lower tail).")
sf = public(_sf, "The normal survival function ``1 - cdf``.")
logsf = public(_logsf, "Log of the normal survival function.")
ppf = public(_ppf, "The normal quantile function (inverse of ``cdf``).")
isf = public(_isf, "The inverse of the normal survival function.")
