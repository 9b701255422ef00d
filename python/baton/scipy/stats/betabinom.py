"""The beta-binomial distribution's probabilities
(``jax.scipy.stats.betabinom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special


def _logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    k, n, a, b, loc = inexact(k, n, a, b, loc)
    betaln = special().betaln
    y = bnp().floor(k) - loc
    combiln = -(bnp().log1p(n) + betaln(n - y + 1.0, y + 1.0))
    log_probs = combiln + (betaln(y + a, n - y + b) - betaln(a, b))
    log_probs = bnp().where((y == 0) & (n == 0), 0.0, log_probs)
    outside = (y < -loc) | (y > n) | (y + a <= 0)
    log_probs = bnp().where(outside, -np.inf, log_probs)
    return bnp().where((n < 0) | (a <= 0) | (b <= 0), np.nan, log_probs)


def _pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    return bnp().exp(_logpmf(k, n, a, b, loc))


logpmf = public(
    _logpmf,
    "Log of the beta-binomial probability of ``k`` in ``n`` trials with "
    "shapes ``a``, ``b`` (NaN for ``n < 0``, ``a <= 0`` or ``b <= 0``).",
)
pmf = public(_pmf, "The beta-binomial probability of ``k``.")
