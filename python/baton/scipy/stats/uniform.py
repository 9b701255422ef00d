"""The uniform distribution on ``[loc, loc + scale]``
(``jax.scipy.stats.uniform``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public


def _logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    outside = (x > loc + scale) | (x < loc)
    return bnp().where(outside, -np.inf, -bnp().log(scale))


def _pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, loc, scale))


def _cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    inside = bnp().where(x > loc + scale, 1.0, (x - loc) / scale)
    # NaN x gives 0, as JAX's select does.
    return bnp().where((x < loc) | bnp().isnan(x), 0.0, inside)


def _ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = inexact(q, loc, scale)
    bad = bnp().isnan(q) | (q < 0) | (q > 1)
    return bnp().where(bad, np.nan, loc + scale * q)


logpdf = public(_logpdf, "Log of the uniform density (``-inf`` outside the support).")
pdf = public(_pdf, "The uniform density.")
cdf = public(_cdf, "The uniform CDF.")
ppf = public(_ppf, "The uniform quantile function (NaN outside [0, 1]).")
