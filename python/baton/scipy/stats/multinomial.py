"""The multinomial distribution's probabilities
(``jax.scipy.stats.multinomial``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton.scipy.stats._functions import bnp, inexact, special, xlogy


def _logpmf(x: Any, n: Any, p: Any) -> Any:
    b = bnp()
    (p,) = inexact(p)
    x, n = _ops.promote(x, n)
    if not np.issubdtype(np.dtype(x.dtype), np.integer):
        raise ValueError(
            f"x and n must be of integer type; got x.dtype={np.dtype(x.dtype)}, "
            f"n.dtype={np.dtype(n.dtype)}"
        )
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    g = special().gammaln
    logprobs = g(n + 1.0) + b.sum(xlogy(x, p) - g(x + 1.0), axis=-1)
    # As JAX: the counts must add up to n over the whole of x.
    return b.where(b.sum(x) == n, logprobs, -np.inf)


def _pmf(x: Any, n: Any, p: Any) -> Any:
    return bnp().exp(_logpmf(x, n, p))


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """Log of the multinomial probability of the integer counts ``x`` (last
    axis) in ``n`` trials with probabilities ``p``; ``-inf`` unless the
    counts add up to ``n`` (summed over all of ``x``, as JAX)."""
    return _ops.apply(_logpmf, (x, n, p), weak_ref=(0, 1))


def pmf(x: Any, n: Any, p: Any) -> Any:
    """The multinomial probability of the counts ``x``."""
    return _ops.apply(_pmf, (x, n, p), weak_ref=(0, 1))
