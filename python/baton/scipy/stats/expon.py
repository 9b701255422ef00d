"""The exponential distribution (``jax.scipy.stats.expon``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public


def _logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    log_probs = -((x - loc) / scale + bnp().log(scale))
    return bnp().where(x < loc, -np.inf, log_probs)


def _pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, loc, scale))


def _cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    neg = (loc - x) / scale
    return bnp().where(x < loc, 0.0, -bnp().expm1(neg))


def _logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    neg = (loc - x) / scale
    return bnp().where(x < loc, 0.0, neg)


def _sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logsf(x, loc, scale))


def _logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().log1p(-_sf(x, loc, scale))


def _ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = inexact(q, loc, scale)
    bad = bnp().isnan(q) | (q < 0) | (q > 1)
    return bnp().where(bad, np.nan, loc - scale * bnp().log1p(-q))


logpdf = public(_logpdf, "Log of the exponential density (``-inf`` below ``loc``).")
pdf = public(_pdf, "The exponential density.")
cdf = public(_cdf, "The exponential CDF, ``1 - exp(-(x - loc) / scale)``.")
logcdf = public(_logcdf, "Log of the exponential CDF.")
sf = public(_sf, "The exponential survival function.")
logsf = public(_logsf, "Log of the exponential survival function.")
ppf = public(_ppf, "The exponential quantile function (NaN outside [0, 1]).")
