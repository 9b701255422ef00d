"""The logistic distribution (``jax.scipy.stats.logistic``)."""

from __future__ import annotations

from typing import Any

from baton._baton import lax
from baton.scipy.stats._functions import bnp, inexact, public


def _z(x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    x, loc, scale = inexact(x, loc, scale)
    return (x - loc) / scale, scale


def _logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, scale = _z(x, loc, scale)
    half = z / 2.0
    return -2.0 * bnp().logaddexp(half, -half) - bnp().log(scale)


def _pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, loc, scale))


def _cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = _z(x, loc, scale)
    return lax.logistic(z)


def _sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = _z(x, loc, scale)
    return _cdf(-z)


def _logit(q: Any) -> Any:
    return bnp().log(q / (1.0 - q))


def _ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return _logit(x) * scale + loc


def _isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return -_logit(x) * scale + loc


logpdf = public(_logpdf, "Log of the logistic density.")
pdf = public(_pdf, "The logistic density.")
cdf = public(_cdf, "The logistic CDF, ``expit((x - loc) / scale)``.")
sf = public(_sf, "The logistic survival function.")
ppf = public(_ppf, "The logistic quantile function, ``loc + scale * logit(q)``.")
isf = public(_isf, "The inverse logistic survival function.")
