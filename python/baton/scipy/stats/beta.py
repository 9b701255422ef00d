"""The beta distribution (``jax.scipy.stats.beta``): density, and CDFs
through the regularized incomplete beta function."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special, xlog1py, xlogy


def _logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = (
        -special().betaln(a, b)
        + xlogy(a - 1.0, y)
        + xlog1py(b - 1.0, -y)
        - bnp().log(scale)
    )
    out = bnp().where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return bnp().where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out)


def _pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, a, b, loc, scale))


logpdf = public(_logpdf, "Log of the beta density with shapes ``a``, ``b``.")
pdf = public(_pdf, "The beta density with shapes ``a``, ``b``.")


def _clip01(x: Any, loc: Any, scale: Any) -> Any:
    return bnp().clip((x - loc) / scale, 0.0, 1.0)


def _cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    return special().betainc(a, b, _clip01(x, loc, scale))


def _logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().log(_cdf(x, a, b, loc, scale))


def _sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    return special().betainc(b, a, 1.0 - _clip01(x, loc, scale))


def _logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().log(_sf(x, a, b, loc, scale))


cdf = public(_cdf, "The beta CDF ``I_y(a, b)`` at ``y = (x - loc) / scale``.")
logcdf = public(_logcdf, "Log of the beta CDF.")
sf = public(_sf, "The beta survival function ``I_{1-y}(b, a)``.")
logsf = public(_logsf, "Log of the beta survival function.")
