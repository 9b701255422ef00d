"""Gamma-function relatives as compositions of baton's ops (implementations
run on Tracers; ``baton.scipy.special`` wraps them): ``digamma``,
``gammasgn``, ``gamma``, ``loggamma``, ``betaln``, ``beta``,
``factorial``, ``multigammaln``.

``digamma`` uses the reflection ``psi(x) = psi(1 - x) - pi / tan(pi x)``
below 1/2, the recurrence ``psi(y) = psi(y + 6) - sum_k 1/(y + k)`` and
the asymptotic series ``log z - 1/(2z) - sum B_2n / (2n z^2n)`` at
``z >= 6.5`` (float32 accuracy: about 1e-6 relative away from its root,
1e-7 absolute near it); NaN at 0 and the negative integers, as JAX.
The others are built on ``gammaln`` (``_special_math``), so share its
accuracy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
from baton.scipy import _special_math as _sm
from baton.scipy._float_args import as_float as _float
from baton.scipy._float_args import bnp as _bnp

# B_2n / (2n) for n = 1..5, the asymptotic series of digamma.
_DIGAMMA_SERIES = (1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132)


def _digamma_f(x: Any) -> Any:
    bnp = _bnp()
    reflect = x < 0.5
    y = bnp.where(reflect, 1.0 - x, x)
    shift = y * 0.0
    for k in range(6):
        shift = shift + 1.0 / (y + float(k))
    z = y + 6.0
    iz2 = 1.0 / (z * z)
    tail = z * 0.0
    for c in reversed(_DIGAMMA_SERIES):
        tail = (tail + c) * iz2
    psi = bnp.log(z) - 0.5 / z - tail - shift
    # pi / tan(pi x), with x reduced to (-1/2, 1/2] first (exact).
    r = x - bnp.round(x)
    cot = math.pi / bnp.tan(math.pi * bnp.where(reflect, r, 0.25))
    out = bnp.where(reflect, psi - cot, psi)
    pole = (x <= 0.0) & (bnp.floor(x) == x)
    return bnp.where(pole, np.nan, out)


def digamma(x: Any) -> Any:
    """Implementation of ``special.digamma``."""
    return _sm._in_float32(_digamma_f, x)


def gammasgn(x: Any) -> Any:
    """Implementation of ``special.gammasgn``: 1 for x >= 0, the sign of
    Gamma(x) below (NaN at the negative integers)."""
    bnp = _bnp()
    x = _float(x)
    odd = bnp.fmod(bnp.ceil(-x), 2.0) != 0.0
    neg = bnp.where(bnp.floor(x) == x, np.nan, bnp.where(odd, -1.0, 1.0))
    return bnp.where(x >= 0.0, 1.0, neg).astype(x.dtype)


def gamma(x: Any) -> Any:
    """Implementation of ``special.gamma``: ``gammasgn(x) * exp(gammaln(x))``."""
    x = _float(x)
    return gammasgn(x) * _bnp().exp(_sm._gammaln_impl(x))


def loggamma(x: Any) -> Any:
    """Implementation of ``special.loggamma`` for real x (NaN for x <= 0)."""
    x = _float(x)
    return _bnp().where(x > 0.0, _sm._gammaln_impl(x), np.nan)


def betaln(a: Any, b: Any) -> Any:
    """Implementation of ``special.betaln``: ``log|B(a, b)|``."""
    a, b = _ops.promote(_float(a), _float(b))
    return _sm._gammaln_impl(a) + _sm._gammaln_impl(b) - _sm._gammaln_impl(a + b)


def beta(a: Any, b: Any) -> Any:
    """Implementation of ``special.beta``: ``B(a, b)`` with its sign."""
    a, b = _ops.promote(_float(a), _float(b))
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * _bnp().exp(betaln(a, b))


def factorial(n: Any) -> Any:
    """Implementation of ``special.factorial`` (not exact):
    ``Gamma(n + 1)``, 0 for negative n."""
    n = _float(n)
    return _bnp().where(n < 0, 0.0, _bnp().exp(_sm._gammaln_impl(n + 1.0)))


def multigammaln(a: Any, *, d: int) -> Any:
    """Implementation of ``special.multigammaln``: the log of the
    multivariate gamma function of dimension d."""
    a = _float(a)
    out = a * 0.0 + (d * (d - 1) / 4.0) * math.log(math.pi)
    for j in range(d):
        out = out + _sm._gammaln_impl(a - j / 2.0)
    return out
