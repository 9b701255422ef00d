"""The binomial distribution's probabilities (``jax.scipy.stats.binom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special, xlog1py, xlogy


def _logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = inexact(k, n, p, loc)
    g = special().gammaln
    y = k - loc
    comb = g(n + 1.0) - (g(y + 1.0) + g(n - y + 1.0))
    linear = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = comb + linear
    log_probs = bnp().where(((y == 0) & (n == 0)) | (linear == 0), 0.0, log_probs)
    return bnp().where((k >= loc) & (k < loc + n + 1.0), log_probs, -np.inf)


def _pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    return bnp().exp(_logpmf(k, n, p, loc))


logpmf = public(
    _logpmf,
    "Log of the binomial probability of ``k`` successes in ``n`` trials of "
    "probability ``p`` (as JAX: 0 where the linear term vanishes).",
)
pmf = public(
    _pmf, "The binomial probability of ``k`` in ``n`` trials of probability ``p``."
)
