"""The chi-squared distribution's density (``jax.scipy.stats.chi2``; the
CDFs need the incomplete gamma function, which baton lacks)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special


def _logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = inexact(x, df, loc, scale)
    y = (x - loc) / scale
    half = df / 2.0
    kernel = (half - 1.0) * bnp().log(y) - y / 2.0
    const = -(special().gammaln(half) + math.log(2.0) * df / 2.0)
    return bnp().where(x < loc, -np.inf, const - bnp().log(scale) + kernel)


def _pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, df, loc, scale))


logpdf = public(
    _logpdf, "Log of the chi-squared density with ``df`` degrees of freedom."
)
pdf = public(_pdf, "The chi-squared density with ``df`` degrees of freedom.")
