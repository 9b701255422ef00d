"""``bt.scipy.special``: ``jax.scipy.special``'s common functions.

``logsumexp`` (with ``b=``, ``return_sign=``), ``expit``, ``logit``,
``xlogy``, ``xlog1py``, and the approximations ``erf``, ``erfc``,
``erfinv``, ``gammaln`` (float32 accuracy, bounds stated in
``baton/scipy/_special_math.py``); the normal distribution's ``ndtr``,
``log_ndtr``, ``ndtri`` (``_special_ndtr.py``); ``digamma``, ``gamma``,
``gammasgn``, ``loggamma``, ``beta``, ``betaln``, ``factorial``,
``multigammaln`` (``_special_gamma.py``); ``entr``, ``rel_entr``,
``kl_div``, ``boxcox``, ``boxcox1p``, ``softmax``, ``log_softmax``. Every
function works eagerly, under ``bt.jit`` and ``bt.vmap``, and is
differentiable by ``bt.grad``; each runs eagerly as one compiled program per
shape and dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baton import _ops
from baton._checkpoint import stop_gradient
from baton._custom import custom_jvp
from baton.scipy import _softmax, _special_gamma, _special_ndtr
from baton.scipy._float_args import as_float as _float
from baton.scipy._float_args import bnp as _bnp
from baton.scipy._special_math import erf, erfc, erfinv, gammaln

__all__ = [
    "beta",
    "betaln",
    "boxcox",
    "boxcox1p",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "factorial",
    "gamma",
    "gammaln",
    "gammasgn",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "rel_entr",
    "softmax",
    "xlog1py",
    "xlogy",
]


def _axes(axis: Any) -> Any:
    if axis is None or isinstance(axis, int):
        return axis
    return tuple(int(a) for a in axis)


def _logsumexp(a: Any, b: Any, *, axis: Any, keepdims: bool, return_sign: bool) -> Any:
    bnp = _bnp()
    a = _float(a)
    if b is not None:
        a, b = _ops.promote(a, _float(b))
        a = bnp.where(b != 0, a, -np.inf)
    amax = bnp.max(a, axis=axis, keepdims=True)
    # The max only shifts for stability: no gradient flows through it, and
    # an all -inf (or inf) slice shifts by 0.
    amax = stop_gradient(bnp.where(bnp.isfinite(amax), amax, 0.0))
    e = bnp.exp(a - amax)
    if b is not None:
        e = e * b
    s = bnp.sum(e, axis=axis, keepdims=keepdims)
    sign = bnp.sign(s)
    out = bnp.log(bnp.abs(s)) + (amax if keepdims else bnp.squeeze(amax, axis=axis))
    if return_sign:
        return out, sign
    if b is not None:
        out = bnp.where(sign < 0, np.nan, out)
    return out


def logsumexp(
    a: Any,
    axis: int | tuple[int, ...] | None = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: Any = None,
) -> Any:
    """``log(sum(b * exp(a), axis))``, computed stably (the max is
    subtracted first and gets no gradient, as in JAX).

    ``b`` scales each term (broadcast against ``a``); a negative sum gives
    NaN unless ``return_sign=True``, which returns ``(log|sum|, sign)``.
    ``where=`` is not supported (NotImplementedError).
    """
    if where is not None:
        raise NotImplementedError(
            "logsumexp: where= is not supported; mask with "
            "bnp.where(mask, a, -inf) instead"
        )
    static = (
        ("axis", _axes(axis)),
        ("keepdims", bool(keepdims)),
        ("return_sign", bool(return_sign)),
    )
    if b is None:
        return _ops.apply(_logsumexp_no_b, (a,), static)
    return _ops.apply(_logsumexp, (a, b), static)


def _logsumexp_no_b(a: Any, **static: Any) -> Any:
    return _logsumexp(a, None, **static)


def _expit(x: Any) -> Any:
    from baton._baton import lax

    return lax.logistic(_float(x))


def expit(x: Any) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    return _ops.apply(_expit, (x,))


def _logit(x: Any) -> Any:
    bnp = _bnp()
    x = _float(x)
    return bnp.log(x / (1.0 - x))


def logit(x: Any) -> Any:
    """The inverse of :func:`expit`: ``log(x / (1 - x))``."""
    return _ops.apply(_logit, (x,))


@custom_jvp
def _xlogy_rule(x: Any, y: Any) -> Any:
    bnp = _bnp()
    ok = x != 0
    # Where x == 0 the result is 0 (even for y == 0).
    safe_x = bnp.where(ok, x, 1.0)
    safe_y = bnp.where(ok, y, 1.0)
    return bnp.where(ok, safe_x * bnp.log(safe_y), 0.0)


@_xlogy_rule.defjvp
def _xlogy_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (tx, ty) = primals, tangents
    return _xlogy_rule(x, y), tx * _bnp().log(y) + ty * x / y  # as JAX


@custom_jvp
def _xlog1py_rule(x: Any, y: Any) -> Any:
    bnp = _bnp()
    ok = x != 0
    safe_x = bnp.where(ok, x, 1.0)
    safe_y = bnp.where(ok, y, 0.0)
    return bnp.where(ok, safe_x * bnp.log1p(safe_y), 0.0)


@_xlog1py_rule.defjvp
def _xlog1py_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py_rule(x, y), tx * _bnp().log1p(y) + ty * x / (1.0 + y)


def _xlogy(x: Any, y: Any) -> Any:
    return _xlogy_rule(*_ops.promote(_float(x), _float(y)))


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, with 0 where ``x == 0`` (also for ``y == 0``); the
    derivative is JAX's (``log(y)`` in x, ``x / y`` in y)."""
    return _ops.apply(_xlogy, (x, y))


def _xlog1py(x: Any, y: Any) -> Any:
    return _xlog1py_rule(*_ops.promote(_float(x), _float(y)))


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, with 0 where ``x == 0`` (also for ``y == -1``)."""
    return _ops.apply(_xlog1py, (x, y))


# ---- the normal distribution (_special_ndtr.py) ----


def ndtr(x: Any) -> Any:
    """The standard normal CDF, ``(1 + erf(x / sqrt 2)) / 2``."""
    return _ops.apply(_special_ndtr.ndtr, (x,))


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """``log(ndtr(x))``, accurate far into both tails (an asymptotic series
    of ``series_order`` terms below -10)."""
    if not 0 <= int(series_order) <= 30:
        raise ValueError(f"series_order must be in [0, 30], got {series_order}")
    order = (("series_order", int(series_order)),)
    return _ops.apply(_special_ndtr.log_ndtr, (x,), order)


def ndtri(p: Any) -> Any:
    """The inverse of :func:`ndtr` (``-inf`` at 0, ``inf`` at 1, NaN
    outside [0, 1])."""
    return _ops.apply(_special_ndtr.ndtri, (p,))


# ---- gamma relatives (_special_gamma.py) ----


def digamma(x: Any) -> Any:
    """The digamma function ``d/dx log Gamma(x)`` (NaN at 0 and the
    negative integers)."""
    return _ops.apply(_special_gamma.digamma, (x,))


def gamma(x: Any) -> Any:
    """The gamma function (``inf`` at 0, NaN at the negative integers)."""
    return _ops.apply(_special_gamma.gamma, (x,))


def gammasgn(x: Any) -> Any:
    """The sign of the gamma function (1 for ``x >= 0``)."""
    return _ops.apply(_special_gamma.gammasgn, (x,))


def loggamma(x: Any) -> Any:
    """``log Gamma(x)`` for real ``x > 0`` (NaN elsewhere, as JAX)."""
    return _ops.apply(_special_gamma.loggamma, (x,))


def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)|`` from three ``gammaln``."""
    return _ops.apply(_special_gamma.betaln, (a, b))


def beta(a: Any, b: Any) -> Any:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``."""
    return _ops.apply(_special_gamma.beta, (a, b))


def factorial(n: Any, exact: bool = False) -> Any:
    """``n!`` as ``Gamma(n + 1)`` (0 for negative n); ``exact=True`` is not
    supported, as in JAX."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    return _ops.apply(_special_gamma.factorial, (n,))


def multigammaln(a: Any, d: Any) -> Any:
    """The log of the multivariate gamma function of (static) dimension
    ``d``."""
    return _ops.apply(_special_gamma.multigammaln, (a,), (("d", int(d)),))


# ---- entropies and transforms ----


def _entr(x: Any) -> Any:
    bnp = _bnp()
    x = _float(x)
    safe = bnp.where(x > 0, x, 1.0)
    return bnp.where(x < 0, -np.inf, bnp.where(x == 0, 0.0, -safe * bnp.log(safe)))


def entr(x: Any) -> Any:
    """The elementwise entropy ``-x log x`` (0 at 0, ``-inf`` below)."""
    return _ops.apply(_entr, (x,))


def _rel_entr(p: Any, q: Any) -> Any:
    bnp = _bnp()
    p, q = _ops.promote(_float(p), _float(q))
    both = (p > 0) & (q > 0)
    sp, sq = bnp.where(both, p, 1.0), bnp.where(both, q, 1.0)
    val = sp * bnp.log(sp) - sp * bnp.log(sq)
    return bnp.where(both, val, bnp.where((p == 0) & (q >= 0), 0.0, np.inf))


def rel_entr(p: Any, q: Any) -> Any:
    """``p log(p / q)`` elementwise (0 where ``p == 0 <= q``, ``inf`` for
    other non-positive arguments)."""
    return _ops.apply(_rel_entr, (p, q))


def _kl_div(p: Any, q: Any) -> Any:
    p, q = _ops.promote(_float(p), _float(q))
    return _rel_entr(p, q) - p + q


def kl_div(p: Any, q: Any) -> Any:
    """``p log(p / q) - p + q`` elementwise (``rel_entr(p, q) - p + q``)."""
    return _ops.apply(_kl_div, (p, q))


def _boxcox(x: Any, lmbda: Any, *, one_plus: bool) -> Any:
    bnp = _bnp()
    x, lmbda = _ops.promote(_float(x), _float(lmbda))
    zero = lmbda == 0
    safe = bnp.where(zero, 1.0, lmbda)
    lx = bnp.log1p(x) if one_plus else bnp.log(x)
    return bnp.where(zero, lx, bnp.expm1(safe * lx) / safe)


def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log x`` at
    ``lmbda == 0``)."""
    return _ops.apply(_boxcox, (x, lmbda), (("one_plus", False),))


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform of ``1 + x``."""
    return _ops.apply(_boxcox, (x, lmbda), (("one_plus", True),))


def softmax(x: Any, /, *, axis: Any = None) -> Any:
    """``exp(x) / sum(exp(x), axis)`` (``bt.nn.softmax``; all axes by
    default, as in jax.scipy.special)."""
    return _ops.apply(_softmax.softmax, (x,), (("axis", _softmax.axis_arg(axis)),))


def log_softmax(x: Any, /, *, axis: Any = None) -> Any:
    """``x - logsumexp(x, axis)`` (``bt.nn.log_softmax``; all axes by
    default)."""
    return _ops.apply(_softmax.log_softmax, (x,), (("axis", _softmax.axis_arg(axis)),))
