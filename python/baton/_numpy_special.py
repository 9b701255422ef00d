"""``baton.numpy``'s functions that stand on ``bt.lax``'s and
``bt.scipy``'s (a layer above baton.numpy): ``i0``, ``kaiser``,
``nextafter``, ``spacing``. Importing this module (``baton/__init__.py``
does) adds them to ``baton.numpy``."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import baton.numpy as bnp
from baton import lax as _lax
from baton._custom import custom_jvp
from baton.scipy import special as _special

__all__ = ["i0", "kaiser", "nextafter", "spacing"]


def _inexact(x: Any) -> Any:
    x = bnp.asarray(x)
    if not bnp.issubdtype(x.dtype, bnp.inexact):
        x = x.astype(bnp.float32)
    return x


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0
    (``exp(|x|) * i0e(x)``; integers give float32)."""
    x = _inexact(x)
    if bnp.issubdtype(x.dtype, bnp.complexfloating):
        raise ValueError("i0: complex input is not supported (as in JAX)")
    return _i0(x)


@custom_jvp
def _i0(x: Any) -> Any:
    return _special.i0(x)


@_i0.defjvp
def _i0_jvp(primals: Any, tangents: Any) -> Any:
    # d/dx i0(x) = i1(x) (0 at 0, where exp(|x|)'s kink would give 1).
    (x,), (t,) = primals, tangents
    return _i0(x), t * _special.i1(x)


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window of ``M`` points with shape parameter ``beta``."""
    M = operator.index(M)
    if M <= 1:
        return bnp.ones(max(M, 0), bnp.float32) if M <= 0 else bnp.ones(1, bnp.float32)
    n = bnp.arange(M, dtype=bnp.float32)
    alpha = 0.5 * (M - 1)
    beta = _inexact(beta)
    return i0(beta * bnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


def nextafter(x1: Any, x2: Any, /) -> Any:
    """The next representable value after ``x1`` towards ``x2``, elementwise
    (promoted to a common floating dtype)."""
    a, b = _inexact(x1), _inexact(x2)
    d = bnp.result_type(a, b)
    return _lax.nextafter(a.astype(d), b.astype(d))


def spacing(x: Any, /) -> Any:
    """The distance from ``x`` to the next representable value away from
    zero (negative for negative ``x``), as JAX computes it."""
    x = _inexact(x)
    if bnp.issubdtype(x.dtype, bnp.complexfloating):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = bnp.asarray(np.inf, x.dtype)
    if x.dtype == bnp.float16:
        return _lax.nextafter(x, bnp.broadcast_to(inf, x.shape)) - x
    result = _lax.nextafter(x, bnp.copysign(inf, x)) - x
    tiny = np.asarray(bnp.finfo(x.dtype).smallest_subnormal, x.dtype)
    return bnp.where(result == 0, bnp.copysign(tiny, x), result)


for _name in __all__:
    setattr(bnp, _name, globals()[_name])
    if _name not in bnp.__all__:
        bnp.__all__.append(_name)
del _name
