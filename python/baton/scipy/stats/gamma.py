"""The gamma distribution's density (``jax.scipy.stats.gamma``; the CDFs
need the incomplete gamma function, which baton lacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special, xlogy


def _logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = inexact(x, a, loc, scale)
    ok = x >= loc
    y = bnp().where(ok, (x - loc) / scale, 1.0)
    log_probs = xlogy(a - 1.0, y) - y - (special().gammaln(a) + bnp().log(scale))
    return bnp().where(ok, log_probs, -np.inf)


def _pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, a, loc, scale))


logpdf = public(
    _logpdf, "Log of the gamma density of shape ``a`` (``-inf`` below ``loc``)."
)
pdf = public(_pdf, "The gamma density of shape ``a``.")
