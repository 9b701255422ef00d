"""The Pareto distribution (``jax.scipy.stats.pareto``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public


def _logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = inexact(x, b, loc, scale)
    z = (x - loc) / scale
    log_probs = -(bnp().log(scale / b) + (b + 1.0) * bnp().log(z))
    return bnp().where(x < loc + scale, -np.inf, log_probs)


def _pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, b, loc, scale))


def _cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = inexact(x, b, loc, scale)
    z = (x - loc) / scale
    return bnp().where(x < loc + scale, 0.0, 1.0 - bnp().power(z, -b))


def _logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = inexact(x, b, loc, scale)
    z = (x - loc) / scale
    return bnp().where(x < loc + scale, -np.inf, bnp().log1p(-bnp().power(z, -b)))


def _logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = inexact(x, b, loc, scale)
    z = (x - loc) / scale
    return bnp().where(x < loc + scale, 0.0, -(b * bnp().log(z)))


def _sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logsf(x, b, loc, scale))


def _ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, b, loc, scale = inexact(q, b, loc, scale)
    val = loc + scale * bnp().power(1.0 - q, -(1.0 / b))
    return bnp().where(bnp().isnan(q) | (q < 0) | (q > 1), np.nan, val)


logpdf = public(_logpdf, "Log of the Pareto density with shape ``b``.")
pdf = public(_pdf, "The Pareto density with shape ``b``.")
cdf = public(_cdf, "The Pareto CDF ``1 - z**-b``.")
logcdf = public(_logcdf, "Log of the Pareto CDF.")
sf = public(_sf, "The Pareto survival function ``z**-b``.")
logsf = public(_logsf, "Log of the Pareto survival function.")
ppf = public(_ppf, "The Pareto quantile function (NaN outside [0, 1]).")
