"""The Poisson distribution (``jax.scipy.stats.poisson``): probabilities,
the CDF (through the upper incomplete gamma function) and the entropy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
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


def _cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = inexact(k, mu, loc)
    x = k - loc
    p = special().gammaincc(bnp().floor(1.0 + x), mu)
    return bnp().where(x < 0, 0.0, p)


cdf = public(_cdf, "The Poisson CDF ``Q(floor(k - loc) + 1, mu)``.")


def _entropy_sum(mu: Any, max_k: int, upper: Any) -> Any:
    """``sum_k entr(pmf(k))`` over ``k < min(max_k, upper)``."""
    n = bnp()
    from baton.scipy import special as sp

    k = n.arange(max_k, dtype=mu.dtype)[:, None]
    probs = n.exp(_logpmf(k, mu[None, :], 0.0))
    probs = n.where(k < n.ceil(upper)[None, :], probs, 0.0)
    return n.sum(sp._entr(probs), axis=0)


def _entropy(mu: Any, loc: Any = 0) -> Any:
    n = bnp()
    mu, loc = inexact(mu, loc)
    shape = n.broadcast_shapes(tuple(mu.shape), tuple(loc.shape))
    flat = n.ravel(mu)
    small = _entropy_sum(flat, 35, flat + 20.0)
    medium = _entropy_sum(flat, 250, flat + 10.0 * n.sqrt(flat) + 20.0)
    large = 0.5 * n.log(2 * math.pi * math.e * flat) - 1.0 / (12.0 * flat)
    out = n.where(flat < 10, small, n.where(flat < 100, medium, large))
    out = n.where(flat == 0, 0.0, out)
    return n.broadcast_to(n.reshape(out, tuple(mu.shape)), shape)


def entropy(mu: Any, loc: Any = 0) -> Any:
    """The entropy of the Poisson distribution of mean ``mu`` (in nats):
    the sum ``-sum_k p_k log p_k`` up to ``k < mu + 20`` (``mu < 10``) or
    ``mu + 10 sqrt(mu) + 20`` (``mu < 100``, at most 250 terms), the
    asymptotic ``log(2 pi e mu) / 2 - 1 / (12 mu)`` above, as JAX."""
    return _ops.apply(_entropy, (mu, loc))
