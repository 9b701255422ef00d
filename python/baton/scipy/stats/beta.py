"""The beta distribution's density (``jax.scipy.stats.beta``; the CDFs
need the incomplete beta function, which baton lacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special, xlog1py, xlogy


def _logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = (
        -special().betaln(a, b)
        + xlogy(a - 1.0, y)
        + xlog1py(b - 1.0, -y)
        - bnp().log(scale)
    )
    out = bnp().where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return bnp().where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out)


def _pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return bnp().exp(_logpdf(x, a, b, loc, scale))


logpdf = public(_logpdf, "Log of the beta density with shapes ``a``, ``b``.")
pdf = public(_pdf, "The beta density with shapes ``a``, ``b``.")
