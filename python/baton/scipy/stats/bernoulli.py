"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, xlog1py, xlogy


def _logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = inexact(k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1.0 - x, -p)
    return bnp().where((x < 0) | (x > 1), -np.inf, log_probs)


def _pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return bnp().exp(_logpmf(k, p, loc))


def _bad_p(p: Any) -> Any:
    return bnp().isnan(p) | (p < 0) | (p > 1)


def _cdf(k: Any, p: Any) -> Any:
    k, p = inexact(k, p)
    val = bnp().where(k < 0, 0.0, bnp().where(k < 1, 1.0 - p, 1.0))
    return bnp().where(bnp().isnan(k) | _bad_p(p), np.nan, val)


def _ppf(q: Any, p: Any) -> Any:
    q, p = inexact(q, p)
    bad = bnp().isnan(q) | _bad_p(p) | (q < 0) | (q > 1)
    return bnp().where(bad, np.nan, bnp().where(q <= 1.0 - p, 0.0, 1.0))


logpmf = public(
    _logpmf, "Log of the Bernoulli probability of ``k`` (``-inf`` off {0, 1})."
)
pmf = public(_pmf, "The Bernoulli probability of ``k``.")
cdf = public(_cdf, "The Bernoulli CDF.")
ppf = public(_ppf, "The Bernoulli quantile function.")
