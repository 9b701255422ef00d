"""The Cauchy distribution (``jax.scipy.stats.cauchy``)."""

from __future__ import annotations

import math
from typing import Any

from baton.scipy.stats._functions import bnp, inexact, public


def _logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    z = (x - loc) / scale
    return -(bnp().log(math.pi * scale) + bnp().log1p(z * z))


def _pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, loc, scale))


def _cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return 0.5 + bnp().arctan((x - loc) / scale) * (1.0 / math.pi)


def _logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().log(_cdf(x, loc, scale))


def _sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return _cdf(-x, -loc, scale)


def _logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return _logcdf(-x, -loc, scale)


def _ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = inexact(q, loc, scale)
    return bnp().tan(math.pi * q - math.pi / 2) * scale + loc


def _isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = inexact(q, loc, scale)
    return bnp().tan(math.pi / 2 - math.pi * q) * scale + loc


logpdf = public(_logpdf, "Log of the Cauchy density.")
pdf = public(_pdf, "The Cauchy density ``1 / (pi scale (1 + z^2))``.")
cdf = public(_cdf, "The Cauchy CDF ``1/2 + atan(z) / pi``.")
logcdf = public(_logcdf, "Log of the Cauchy CDF.")
sf = public(_sf, "The Cauchy survival function.")
logsf = public(_logsf, "Log of the Cauchy survival function.")
ppf = public(_ppf, "The Cauchy quantile function ``loc + scale tan(pi (q - 1/2))``.")
isf = public(_isf, "The inverse Cauchy survival function.")
