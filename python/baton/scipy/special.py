"""``bt.scipy.special``: ``jax.scipy.special``'s common functions.

``logsumexp`` (with ``b=``, ``return_sign=``), ``expit``, ``logit``,
``xlogy``, ``xlog1py``, and the approximations ``erf``, ``erfc``,
``erfinv``, ``gammaln`` (float32 accuracy, bounds stated in
``baton/scipy/_special_math.py``); the normal distribution's ``ndtr``,
``log_ndtr``, ``ndtri`` (``_special_ndtr.py``); ``digamma``, ``gamma``,
``gammasgn``, ``loggamma``, ``beta``, ``betaln``, ``factorial``,
``multigammaln`` (``_special_gamma.py``); ``entr``, ``rel_entr``,
``kl_div``, ``boxcox``, ``boxcox1p``, ``softmax``, ``log_softmax``; the
incomplete gamma and beta functions ``gammainc``, ``gammaincc``,
``betainc`` (``_special_incomplete.py``); ``i0``, ``i0e``, ``i1``, ``i1e``,
``bessel_jn``, ``zeta``, ``polygamma`` (``_special_bessel.py``); ``expi``,
``exp1``, ``expn``, ``sici``, ``spence``, ``erfcx``, ``dawsn``,
``fresnel`` (``_special_expint.py``); ``bernoulli``, ``comb``, ``poch``,
``hyp1f1``, ``hyp2f1``, ``owens_t`` (``_special_misc.py``). The algorithms are JAX's
(or XLA's, where JAX lowers to an XLA routine), so values agree to float32
rounding apart from the stated bounds of ``erf`` / ``gammaln``. Every
function works eagerly, under ``bt.jit`` and ``bt.vmap``, and is
differentiable by ``bt.grad``; each runs eagerly as one compiled program per
shape and dtype.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from baton import _ops
from baton._checkpoint import stop_gradient
from baton._custom import custom_jvp
from baton.scipy import (
    _softmax,
    _special_bessel,
    _special_expint,
    _special_gamma,
    _special_incomplete,
    _special_misc,
    _special_ndtr,
)
from baton.scipy._float_args import as_float as _float
from baton.scipy._float_args import bnp as _bnp
from baton.scipy._special_math import erf, erfc, erfinv, gammaln

__all__ = [
    "bernoulli",
    "bessel_jn",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp1",
    "expi",
    "expit",
    "expn",
    "factorial",
    "fresnel",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "hyp1f1",
    "hyp2f1",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "owens_t",
    "poch",
    "polygamma",
    "rel_entr",
    "sici",
    "softmax",
    "spence",
    "xlog1py",
    "xlogy",
    "zeta",
]


def _dtype_of(x: Any) -> np.dtype:
    d = getattr(x, "dtype", None)
    return np.dtype(d) if d is not None else np.asarray(x).dtype


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


# ---- incomplete gamma and beta functions (_special_incomplete.py) ----


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function
    ``P(a, x) = gamma(a, x) / Gamma(a)`` (``lax.igamma``); NaN for
    ``a < 0`` or ``x < 0``. Differentiable in both arguments."""
    return _ops.apply(_special_incomplete.igamma, (a, x))


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``1 - P(a, x)``
    (``lax.igammac``), accurate where it is small."""
    return _ops.apply(_special_incomplete.igammac, (a, x))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)``
    (``lax.betainc``); NaN outside ``a, b >= 0``, ``0 <= x <= 1``.
    Differentiable in ``x`` only (the derivative in ``a`` or ``b`` is
    NaN; JAX raises)."""
    return _ops.apply(_special_incomplete.betainc, (a, b, x))


# ---- Bessel, zeta, polygamma (_special_bessel.py) ----


def i0e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 0,
    ``exp(-|x|) I0(x)``."""
    return _ops.apply(_special_bessel.bessel_i0e, (x,))


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 0."""
    return _ops.apply(_special_bessel.i0, (x,))


def i1e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 1,
    ``exp(-|x|) I1(x)``."""
    return _ops.apply(_special_bessel.bessel_i1e, (x,))


def i1(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 1."""
    return _ops.apply(_special_bessel.i1, (x,))


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """The Bessel functions of the first kind ``J_0(z) .. J_v(z)``, stacked
    on a new leading axis (shape ``(v + 1, *z.shape)``), by backward
    recurrence from order ``n_iter``."""
    v, n_iter = int(v), int(n_iter)
    if v < 0:
        raise ValueError(f"bessel_jn: v must be >= 0, got {v}")
    if n_iter < v:
        raise ValueError(f"bessel_jn: n_iter ({n_iter}) must be >= v ({v})")
    static = (("v", v), ("n_iter", n_iter))
    return _ops.apply(_special_bessel.bessel_jn, (z,), static)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``sum_n (n + q)^-x`` (``lax.zeta``); as in
    JAX, the Riemann zeta function (``q=None``) is not implemented."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to "
            "compute the Hurwitz Zeta function."
        )
    return _ops.apply(_special_bessel.zeta, (x, q))


def polygamma(n: Any, x: Any) -> Any:
    """The polygamma function ``psi^(n)(x)``, the n-th derivative of
    digamma; ``n`` must have an integer dtype (as in JAX)."""
    dt = _dtype_of(n)
    if not np.issubdtype(dt, np.integer):
        raise ValueError(
            f"Argument `n` to polygamma must be of integer type. Got dtype {dt}."
        )
    return _ops.apply(_special_bessel.polygamma, (n, x))


# ---- exponential and trigonometric integrals (_special_expint.py) ----


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x)``."""
    return _ops.apply(_special_expint.expi, (x,))


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x)``; differentiable in
    ``x`` (``-E_{n-1}(x)``)."""
    return _ops.apply(_special_expint.expn, (n, x))


def exp1(x: Any) -> Any:
    """The exponential integral ``E_1(x)``."""
    return _ops.apply(_special_expint.exp1, (x,))


def sici(x: Any) -> Any:
    """The sine and cosine integrals, ``(Si(x), Ci(x))``."""
    return _ops.apply(_special_expint.sici, (x,))


def spence(x: Any) -> Any:
    """Spence's function (the dilogarithm ``integral_1^x log t / (1 - t)
    dt``); NaN for ``x < 0``. Float inputs only, as in JAX."""
    dt = _dtype_of(x)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(
            f"x.dtype={dt} is not supported, see docstring for supported types."
        )
    return _ops.apply(_special_expint.spence, (x,))


def erfcx(x: Any) -> Any:
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""
    return _ops.apply(_special_expint.erfcx, (x,))


def dawsn(x: Any) -> Any:
    """Dawson's integral ``exp(-x^2) integral_0^x exp(t^2) dt``."""
    return _ops.apply(_special_expint.dawsn, (x,))


def fresnel(x: Any) -> Any:
    """The Fresnel integrals ``(S(x), C(x))`` (single-precision
    coefficients for every dtype, as JAX uses for float32)."""
    return _ops.apply(_special_expint.fresnel, (x,))


# ---- combinatorics and hypergeometric functions (_special_misc.py) ----


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers ``B_0 .. B_n`` (float32, ``B_1 = -1/2``);
    ``n`` a static non-negative integer."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    return _bnp().asarray(_special_misc.bernoulli_values(n))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """The number of combinations ``N choose k`` as a float (through
    gammaln); 0 for ``N < 0``, ``k < 0`` or ``k > N``. ``repetition=True``
    counts combinations with repetition."""
    return _ops.apply(_special_misc.comb, (N, k), (("repetition", bool(repetition)),))


def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol (rising factorial) ``Gamma(z + m) /
    Gamma(z)``."""
    return _ops.apply(_special_misc.poch, (z, m))


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function ``1F1(a; b; x)``;
    differentiable in all three arguments."""
    return _ops.apply(_special_misc.hyp1f1, (a, b, x))


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Gauss' hypergeometric function ``2F1(a, b; c; x)`` for real
    arguments (``inf`` for ``x > 1``, as JAX); differentiable in all four
    arguments."""
    return _ops.apply(_special_misc.hyp2f1, (a, b, c, x))


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function ``T(h, a)``."""
    return _ops.apply(_special_misc.owens_t, (h, a))
