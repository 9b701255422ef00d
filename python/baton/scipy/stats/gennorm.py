"""The generalized normal distribution (``jax.scipy.stats.gennorm``)."""

from __future__ import annotations

from typing import Any

from baton.scipy.stats._functions import bnp, inexact, public, special


def _logpdf(x: Any, beta: Any) -> Any:
    x, beta = inexact(x, beta)
    return bnp().log(0.5 * beta) - special().gammaln(1.0 / beta) - bnp().abs(x) ** beta


def _pdf(x: Any, beta: Any) -> Any:
    return bnp().exp(_logpdf(x, beta))


def _cdf(x: Any, beta: Any) -> Any:
    x, beta = inexact(x, beta)
    n = bnp()
    return 0.5 * (1.0 + n.sign(x) * special().gammainc(1.0 / beta, n.abs(x) ** beta))


logpdf = public(_logpdf, "Log of the generalized normal density of shape ``beta``.")
pdf = public(
    _pdf, "The generalized normal density ``beta / (2 Gamma(1/beta)) exp(-|x|^beta)``."
)
cdf = public(
    _cdf, "The generalized normal CDF (through the incomplete gamma function)."
)
