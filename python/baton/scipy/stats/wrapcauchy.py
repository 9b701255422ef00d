"""The wrapped Cauchy distribution's density
(``jax.scipy.stats.wrapcauchy``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public


def _logpdf(x: Any, c: Any) -> Any:
    x, c = inexact(x, c)
    n = bnp()
    val = (
        n.log(1.0 - c * c)
        - math.log(2 * math.pi)
        - n.log(1.0 + c * c - 2.0 * c * n.cos(x))
    )
    val = n.where((x >= 0) & (x <= 2 * math.pi), val, -np.inf)
    return n.where((c > 0) & (c < 1), val, np.nan)


def _pdf(x: Any, c: Any) -> Any:
    return bnp().exp(_logpdf(x, c))


logpdf = public(
    _logpdf,
    "Log of the wrapped Cauchy density on ``[0, 2 pi]`` (``-inf`` outside; "
    "NaN unless ``0 < c < 1``).",
)
pdf = public(_pdf, "The wrapped Cauchy density of shape ``c``.")
