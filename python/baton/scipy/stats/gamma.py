"""The gamma distribution (``jax.scipy.stats.gamma``): density, and CDFs
through the regularized incomplete gamma functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special, xlogy


def _logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = inexact(x, a, loc, scale)
    ok = x >= loc
    y = bnp().where(ok, (x - loc) / scale, 1.0)
    log_probs = xlogy(a - 1.0, y) - y - (special().gammaln(a) + bnp().log(scale))
    return bnp().where(ok, log_probs, -np.inf)


def _pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, a, loc, scale))


logpdf = public(
    _logpdf, "Log of the gamma density of shape ``a`` (``-inf`` below ``loc``)."
)
pdf = public(_pdf, "The gamma density of shape ``a``.")


def _cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = inexact(x, a, loc, scale)
    return special().gammainc(a, bnp().clip((x - loc) / scale, 0.0, np.inf))


def _logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().log(_cdf(x, a, loc, scale))


def _sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = inexact(x, a, loc, scale)
    y = (x - loc) / scale
    return bnp().where(y < 0, 1.0, special().gammaincc(a, y))


def _logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().log(_sf(x, a, loc, scale))


cdf = public(_cdf, "The gamma CDF ``P(a, (x - loc) / scale)``.")
logcdf = public(_logcdf, "Log of the gamma CDF.")
sf = public(_sf, "The gamma survival function ``Q(a, (x - loc) / scale)``.")
logsf = public(_logsf, "Log of the gamma survival function.")
