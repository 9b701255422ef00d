"""The chi-squared distribution (``jax.scipy.stats.chi2``): density, and
CDFs through the regularized incomplete gamma functions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special


def _logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = inexact(x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2.0
    kernel = (half - 1.0) * bnp().log(y) - y / 2.0
    const = -(special().gammaln(half) + math.log(2.0) * df / 2.0)
    return bnp().where(x < loc, -np.inf, const - bnp().log(scale) + kernel)


def _pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, df, loc, scale))


logpdf = public(
    _logpdf, "Log of the chi-squared density with ``df`` degrees of freedom."
)
pdf = public(_pdf, "The chi-squared density with ``df`` degrees of freedom.")


def _half_y(x: Any, loc: Any, scale: Any) -> Any:
    return bnp().clip((x - loc) / (scale * 2.0), 0.0, np.inf)


def _cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = inexact(x, df, loc, scale)
    return special().gammainc(df / 2.0, _half_y(x, loc, scale))


def _logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().log(_cdf(x, df, loc, scale))


def _sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = inexact(x, df, loc, scale)
    return special().gammaincc(df / 2.0, _half_y(x, loc, scale))


def _logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().log(_sf(x, df, loc, scale))


cdf = public(_cdf, "The chi-squared CDF ``P(df / 2, y / 2)``.")
logcdf = public(_logcdf, "Log of the chi-squared CDF.")
sf = public(_sf, "The chi-squared survival function ``Q(df / 2, y / 2)``.")
logsf = public(_logsf, "Log of the chi-squared survival function.")
