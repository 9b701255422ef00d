"""The standard normal CDF and its inverse: ``ndtr``, ``log_ndtr`` and
``ndtri``, as compositions of baton's ops (implementations run on
Tracers; ``baton.scipy.special`` wraps them).

- ``ndtr(x) = (1 + erf(x / sqrt 2)) / 2`` near 0 and ``erfc(|x| / sqrt 2)
  / 2`` in the tails (JAX's split), so the lower tail keeps erfc's
  relative accuracy.
- ``log_ndtr``: ``log(ndtr(x))`` on ``(-10, 5]`` (float32's bounds in JAX),
  ``-ndtr(-x)`` above, and the asymptotic series
  ``-x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - ...)`` below.
- ``ndtri(p) = sqrt 2 * erfinv(2p - 1)`` by Giles' single-precision
  polynomials, with ``w = -log(1 - (2p-1)^2)`` taken as ``-log(4 p (1-p))``
  in the tails so that small ``p`` keep their relative accuracy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton.scipy import _special_math as _sm
from baton.scipy._float_args import as_float as _float
from baton.scipy._float_args import bnp as _bnp

_HALF_SQRT2 = 0.5 * math.sqrt(2.0)
_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def ndtr(x: Any) -> Any:
    """Implementation of ``special.ndtr`` on a Tracer."""
    bnp = _bnp()
    x = _float(x)
    y = x * _HALF_SQRT2
    z = bnp.abs(y)
    erf = _sm._erf_impl(y)
    erfc = _sm._erfc_impl(z)
    inner = bnp.where(z < _HALF_SQRT2, 1.0 + erf, bnp.where(y > 0, 2.0 - erfc, erfc))
    return inner * 0.5


def _bounds(d: np.dtype) -> tuple[float, float]:
    return (-20.0, 8.0) if d == np.dtype(np.float64) else (-10.0, 5.0)


def log_ndtr(x: Any, *, series_order: int = 3) -> Any:
    """Implementation of ``special.log_ndtr`` on a Tracer."""
    bnp = _bnp()
    x = _float(x)
    lower, upper = _bounds(np.dtype(x.dtype))
    mid = bnp.log(ndtr(bnp.clip(x, lower, upper)))
    high = -ndtr(-bnp.maximum(x, upper))
    xl = bnp.minimum(x, lower)
    x2 = xl * xl
    # ones_like, not x2 * 0 + 1: x2 is inf far out (and at -inf).
    series = bnp.ones_like(x2)
    term = bnp.ones_like(x2)
    for n in range(1, series_order + 1):
        term = term * (-(2 * n - 1)) / x2
        series = series + term
    low = -0.5 * x2 - bnp.log(-xl) - _LOG_SQRT_2PI + bnp.log(series)
    return bnp.where(x > upper, high, bnp.where(x > lower, mid, low))


def ndtri(p: Any) -> Any:
    """Implementation of ``special.ndtri`` on a Tracer."""
    bnp = _bnp()
    p = _float(p)
    d = np.dtype(p.dtype)
    if d != np.dtype(np.float32) and d != np.dtype(np.float64):
        return ndtri(p.astype(np.float32)).astype(d)
    x = 2.0 * p - 1.0
    central = bnp.abs(x) < 0.5
    w = bnp.where(
        central,
        -bnp.log1p(-x * x),
        -bnp.log(4.0 * p * (1.0 - p)),
    )
    small = w < 5.0
    poly = bnp.where(
        small,
        _sm._horner(_sm._ERFINV_SMALL, w - 2.5),
        _sm._horner(_sm._ERFINV_LARGE, bnp.sqrt(bnp.maximum(w, 5.0)) - 3.0),
    )
    r = _SQRT2 * poly * x
    r = bnp.where(p == 0.0, -np.inf, bnp.where(p == 1.0, np.inf, r))
    return bnp.where((p < 0.0) | (p > 1.0), np.nan, r)
