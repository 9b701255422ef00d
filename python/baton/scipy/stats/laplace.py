"""The Laplace distribution (``jax.scipy.stats.laplace``)."""

from __future__ import annotations

from typing import Any

from baton.scipy.stats._functions import bnp, inexact, public


def _logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    return -(bnp().abs(x - loc) / scale + bnp().log(2.0 * scale))


def _pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, loc, scale))


def _cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = inexact(x, loc, scale)
    d = (x - loc) / scale
    return bnp().where(d <= 0, 0.5 * bnp().exp(d), 1.0 - 0.5 * bnp().exp(-d))


logpdf = public(
    _logpdf, "Log of the Laplace density ``exp(-|x - loc| / scale) / (2 scale)``."
)
pdf = public(_pdf, "The Laplace density.")
cdf = public(_cdf, "The Laplace CDF.")
