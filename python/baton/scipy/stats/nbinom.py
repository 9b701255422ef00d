"""The negative binomial distribution's probabilities
(``jax.scipy.stats.nbinom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special, xlogy


def _logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = inexact(k, n, p, loc)
    g = special().gammaln
    y = k - loc
    comb = g(y + n) - g(n) - g(y + 1.0)
    log_probs = comb + xlogy(n, p) + xlogy(y, 1.0 - p)
    return bnp().where(k < loc, -np.inf, log_probs)


def _pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    return bnp().exp(_logpmf(k, n, p, loc))


logpmf = public(
    _logpmf,
    "Log of the negative binomial probability of ``k`` failures before the "
    "``n``-th success (success probability ``p``).",
)
pmf = public(_pmf, "The negative binomial probability of ``k``.")
