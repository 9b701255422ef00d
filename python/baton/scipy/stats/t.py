"""Student's t distribution (``jax.scipy.stats.t``)."""

from __future__ import annotations

import math
from typing import Any

from baton.scipy.stats._functions import bnp, inexact, public, special


def _logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = inexact(x, df, loc, scale)
    lg = special().gammaln
    z = (x - loc) / scale
    half_df = df / 2.0
    half_df1 = half_df + 0.5
    norm = lg(half_df) + bnp().log(scale * scale * math.pi * df) / 2.0 - lg(half_df1)
    return -(norm + half_df1 * bnp().log1p(z * z / df))


def _pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, df, loc, scale))


logpdf = public(_logpdf, "Log of Student's t density with ``df`` degrees of freedom.")
pdf = public(_pdf, "Student's t density with ``df`` degrees of freedom.")
