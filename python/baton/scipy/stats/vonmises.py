"""The von Mises distribution's density (``jax.scipy.stats.vonmises``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, special


def _logpdf(x: Any, kappa: Any) -> Any:
    x, kappa = inexact(x, kappa)
    n = bnp()
    val = kappa * (n.cos(x) - 1.0) - n.log(2 * math.pi * special().i0e(kappa))
    return n.where(kappa > 0, val, np.nan)


def _pdf(x: Any, kappa: Any) -> Any:
    return bnp().exp(_logpdf(x, kappa))


logpdf = public(
    _logpdf,
    "Log of the von Mises density ``exp(kappa cos x) / (2 pi I0(kappa))`` "
    "(NaN for ``kappa <= 0``, as JAX).",
)
pdf = public(_pdf, "The von Mises density of concentration ``kappa``.")
