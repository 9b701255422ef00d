"""The Poisson distribution's probabilities (``jax.scipy.stats.poisson``;
the CDF needs the incomplete gamma function, which baton lacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special, xlogy


def _logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = inexact(k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - special().gammaln(x + 1.0) - mu
    return bnp().where((x < 0) | (bnp().round(k) != k), -np.inf, log_probs)


def _pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    return bnp().exp(_logpmf(k, mu, loc))


logpmf = public(_logpmf, "Log of the Poisson probability of ``k`` with mean ``mu``.")
pmf = public(_pmf, "The Poisson probability of ``k`` with mean ``mu``.")
