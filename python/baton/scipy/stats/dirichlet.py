"""The Dirichlet distribution's density (``jax.scipy.stats.dirichlet``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton.scipy.stats._functions import bnp, inexact, special, xlogy


def _logpdf(x: Any, alpha: Any) -> Any:
    n = bnp()
    x, alpha = inexact(x, alpha)
    if len(alpha.shape) != 1:
        raise ValueError(
            f"`alpha` must be one-dimensional; got alpha.shape={tuple(alpha.shape)}"
        )
    k = alpha.shape[0]
    if not x.shape or x.shape[0] not in (k, k - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one "
            f"entry fewer; got x.shape={tuple(x.shape)}, "
            f"alpha.shape={tuple(alpha.shape)}"
        )
    if x.shape[0] != k:
        x = n.concatenate([x, 1.0 - n.sum(x, axis=0, keepdims=True)], axis=0)
    g = special().gammaln
    normalize = n.sum(g(alpha)) - g(n.sum(alpha))
    if len(x.shape) > 1:
        alpha = n.reshape(alpha, (k,) + (1,) * (len(x.shape) - 1))
    log_probs = n.sum(xlogy(alpha - 1.0, x), axis=0) - normalize
    simplex = n.all(x > 0, axis=0) & (n.abs(n.sum(x, axis=0) - 1.0) < 1e-6)
    return n.where(simplex, log_probs, -np.inf)


def _pdf(x: Any, alpha: Any) -> Any:
    return bnp().exp(_logpdf(x, alpha))


def logpdf(x: Any, alpha: Any) -> Any:
    """Log of the Dirichlet density with concentrations ``alpha`` (1-D, K
    entries) at ``x`` (K or K - 1 entries on axis 0; the last is then
    ``1 - sum``); ``-inf`` off the simplex."""
    return _ops.apply(_logpdf, (x, alpha))


def pdf(x: Any, alpha: Any) -> Any:
    """The Dirichlet density with concentrations ``alpha``."""
    return _ops.apply(_pdf, (x, alpha))
