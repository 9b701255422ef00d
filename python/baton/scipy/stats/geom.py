"""The geometric distribution (``jax.scipy.stats.geom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from baton.scipy.stats._functions import bnp, inexact, public, xlog1py


def _logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = inexact(k, p, loc)
    x = k - loc
    log_probs = xlog1py(x - 1.0, -p) + bnp().log(p)
    return bnp().where(x <= 0, -np.inf, log_probs)


def _pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return bnp().exp(_logpmf(k, p, loc))


logpmf = public(
    _logpmf, "Log of the geometric probability of ``k`` trials to a success."
)
pmf = public(_pmf, "The geometric probability of ``k`` trials to a success.")
