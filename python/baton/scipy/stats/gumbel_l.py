"""The left-skewed Gumbel distribution (``jax.scipy.stats.gumbel_l``);
NaN for ``scale <= 0``."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public


def _ok(scale: Any, value: Any) -> Any:
    return bnp().where(scale > 0, value, np.nan)


def _logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    safe = bnp().where(scale > 0, scale, 1.0)
    return _ok(scale, -bnp().log(safe) + (z - bnp().exp(z)))


def _pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, loc, scale))


def _logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return _ok(scale, bnp().log(-bnp().expm1(-bnp().exp(z))))


def _cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logcdf(x, loc, scale))


def _logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return _ok(scale, -bnp().exp((x - loc) / scale))


def _sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logsf(x, loc, scale))


def _ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    p, loc, scale = inexact(p, loc, scale)
    q = loc + scale * bnp().log(-bnp().log1p(-p))
    return bnp().where((p > 0) & (p < 1), q, np.nan)


logpdf = public(_logpdf, "Log of the Gumbel (left) density.")
pdf = public(_pdf, "The Gumbel (left) density.")
logcdf = public(_logcdf, "Log of the Gumbel (left) CDF.")
cdf = public(_cdf, "The Gumbel (left) CDF ``1 - exp(-exp(z))``.")
sf = public(_sf, "The Gumbel (left) survival function ``exp(-exp(z))``.")
logsf = public(_logsf, "Log of the Gumbel (left) survival function, ``-exp(z)``.")
ppf = public(_ppf, "The Gumbel (left) quantile function (NaN outside (0, 1)).")
