"""Bessel functions, the Hurwitz zeta function and its relatives as
compositions of baton's ops (implementations run on Tracers;
``baton.scipy.special`` and ``bt.lax`` wrap them): ``bessel_i0e``,
``bessel_i1e`` (and ``i0``, ``i1``), ``bessel_jn``, ``zeta``,
``polygamma``, ``bernoulli``.

- ``i0e`` / ``i1e``: Cephes' Chebyshev expansions (on ``[0, 8]`` in
  ``x/2 - 2``, above in ``32/x - 2``), as XLA: the single-precision tables
  (``i0ef.c`` / ``i1ef.c``), the double ones (``i0.c`` / ``i1.c``) for
  float64; half floats compute in float32.
- ``bessel_jn``: JAX's backward recurrence (Miller's algorithm) from order
  ``n_iter``, normalized by ``J0 + 2 J2 + 2 J4 + ... = 1``.
- ``zeta(x, q)``: XLA's Euler-Maclaurin summation (10 terms, then a
  12-term tail in Horner form, the rising factors ``(x + 2j - 1)(x + 2j)``),
  with its poles and domain as XLA's; float64 to double accuracy.
- ``polygamma(n, x)``: ``digamma`` for ``n == 0``, else
  ``(-1)^(n+1) n! zeta(n + 1, x)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from baton import _ops
from baton._custom import custom_jvp
from baton.scipy import _special_gamma as _sg
from baton.scipy import _special_math as _sm
from baton.scipy._float_args import as_float as _float
from baton.scipy._float_args import bnp as _bnp
from baton.scipy._float_args import nan_tangent

# Cephes i0ef.c: exp(-x) I0(x) on [0, 8] and sqrt(x) exp(-x) I0(x) above.
_I0E_A = (
    -1.30002500998624804212e-8,
    6.04699502254191894932e-8,
    -2.67079385394061173391e-7,
    1.11738753912010371815e-6,
    -4.41673835845875056359e-6,
    1.64484480707288970893e-5,
    -5.75419501008210370398e-5,
    1.88502885095841655729e-4,
    -5.76375574538582365885e-4,
    1.63947561694133579842e-3,
    -4.32430999505057594430e-3,
    1.05464603945949983183e-2,
    -2.37374148058994688156e-2,
    4.93052842396707084878e-2,
    -9.49010970480476444210e-2,
    1.71620901522208775349e-1,
    -3.04682672343198398683e-1,
    6.76795274409476084995e-1,
)
_I0E_B = (
    3.39623202570838634515e-9,
    2.26666899049817806459e-8,
    2.04891858946906374183e-7,
    2.89137052083475648297e-6,
    6.88975834691682398426e-5,
    3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)
# Cephes i1ef.c: exp(-x) I1(x) / x on [0, 8] and sqrt(x) exp(-x) I1(x) above.
_I1E_A = (
    9.38153738649577178388e-9,
    -4.44505912879632808065e-8,
    2.00329475355213526229e-7,
    -8.56872026469545474066e-7,
    3.47025130813767847674e-6,
    -1.32731636560394358279e-5,
    4.78156510755005422638e-5,
    -1.61760815825896745588e-4,
    5.12285956168575772895e-4,
    -1.51357245063125314899e-3,
    4.15642294431288815669e-3,
    -1.05640848946261981558e-2,
    2.47264490306265168283e-2,
    -5.29459812080949914269e-2,
    1.02643658689847095384e-1,
    -1.76416518357834055153e-1,
    2.52587186443633654823e-1,
)
_I1E_B = (
    -3.83538038596423702205e-9,
    -2.63146884688951950684e-8,
    -2.51223623787020892529e-7,
    -3.88256480887769039346e-6,
    -1.10588938762623716291e-4,
    -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)
# The double-precision tables (Cephes i0.c / i1.c) extend the single ones
# with higher-order terms in front.
_I0E_A64 = (
    -4.41534164647933937950e-18,
    3.33079451882223809783e-17,
    -2.43127984654795469359e-16,
    1.71539128555513303061e-15,
    -1.16853328779934516808e-14,
    7.67618549860493561688e-14,
    -4.85644678311192946090e-13,
    2.95505266312963983461e-12,
    -1.72682629144155570723e-11,
    9.67580903537323691224e-11,
    -5.18979560163526290666e-10,
    2.65982372468238665035e-9,
    *_I0E_A,
)
_I0E_B64 = (
    -7.23318048787475395456e-18,
    -4.83050448594418207126e-18,
    4.46562142029675999901e-17,
    3.46122286769746109310e-17,
    -2.82762398051658348494e-16,
    -3.42548561967721913462e-16,
    1.77256013305652638360e-15,
    3.81168066935262242075e-15,
    -9.55484669882830764870e-15,
    -4.15056934728722208663e-14,
    1.54008621752140982691e-14,
    3.85277838274214270114e-13,
    7.18012445138366623367e-13,
    -1.79417853150680611778e-12,
    -1.32158118404477131188e-11,
    -3.14991652796324136454e-11,
    1.18891471078464383424e-11,
    4.94060238822496958910e-10,
    *_I0E_B,
)
_I1E_A64 = (
    2.77791411276104639959e-18,
    -2.11142121435816608115e-17,
    1.55363195773620046921e-16,
    -1.10559694773538630805e-15,
    7.60068429473540693410e-15,
    -5.04218550472791168711e-14,
    3.22379336594557470981e-13,
    -1.98397439776494371520e-12,
    1.17361862988909016308e-11,
    -6.66348972350202774223e-11,
    3.62559028155211703701e-10,
    -1.88724975172282928790e-9,
    *_I1E_A,
)
_I1E_B64 = (
    7.51729631084210481353e-18,
    4.41434832307170791151e-18,
    -4.65030536848935832153e-17,
    -3.20952592199342395980e-17,
    2.96262899764595013876e-16,
    3.30820231092092828324e-16,
    -1.88035477551078244854e-15,
    -3.81440307243700780478e-15,
    1.04202769841288027642e-14,
    4.27244001671195135429e-14,
    -2.10154184277266431302e-14,
    -4.08355111109219731823e-13,
    -7.19855177624590851209e-13,
    2.03562854414708950722e-12,
    1.41258074366137813316e-11,
    3.25260358301548823856e-11,
    -1.89749581235054123450e-11,
    -5.58974346219658380687e-10,
    *_I1E_B,
)
# (2k)! / B_2k, k = 12 .. 1 (XLA's Zeta).
_ZETA_COEFFS = (
    -7.1661652561756670113e18,
    1.8152105401943546773e17,
    -4.5979787224074726105e15,
    1.1646782814350067249e14,
    -2.950130727918164224e12,
    7.47242496e10,
    -1.8924375803183791606e9,
    47900160.0,
    -1209600.0,
    30240.0,
    -720.0,
    12.0,
)


def _chebyshev(x: Any, coefficients: tuple[float, ...]) -> Any:
    b0 = x * 0.0
    b1 = b0
    b2 = b0
    for c in coefficients:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _f64(x: Any) -> bool:
    return np.dtype(x.dtype) == np.float64


def _i0e_f(x: Any) -> Any:
    bnp = _bnp()
    ta, tb = (_I0E_A64, _I0E_B64) if _f64(x) else (_I0E_A, _I0E_B)
    z = bnp.abs(x)
    small = z <= 8.0
    safe = bnp.where(small, 8.0, z)
    lo = _chebyshev(0.5 * z - 2.0, ta)
    hi = _chebyshev(32.0 / safe - 2.0, tb) / bnp.sqrt(safe)
    return bnp.where(small, lo, hi)


def _i1e_f(x: Any) -> Any:
    bnp = _bnp()
    ta, tb = (_I1E_A64, _I1E_B64) if _f64(x) else (_I1E_A, _I1E_B)
    z = bnp.abs(x)
    small = z <= 8.0
    safe = bnp.where(small, 8.0, z)
    lo = _chebyshev(0.5 * z - 2.0, ta) * z
    hi = _chebyshev(32.0 / safe - 2.0, tb) / bnp.sqrt(safe)
    r = bnp.where(small, lo, hi)
    return bnp.where(x < 0.0, -r, r)


@custom_jvp
def _i0e_rule(x: Any) -> Any:
    return _i0e_f(x)


@custom_jvp
def _i1e_rule(x: Any) -> Any:
    return _i1e_f(x)


@_i0e_rule.defjvp
def _i0e_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    y = _i0e_rule(x)
    return y, t * (_i1e_rule(x) - _bnp().sign(x) * y)


@_i1e_rule.defjvp
def _i1e_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    bnp = _bnp()
    y = _i1e_rule(x)
    eps = float(np.finfo(np.dtype(x.dtype)).eps)
    big = bnp.abs(x) > eps
    safe = bnp.where(big, x, eps)
    dy = _i0e_rule(safe) - y * (bnp.sign(safe) + 1.0 / safe)
    return y, t * bnp.where(big, dy, 0.5)


def bessel_i0e(x: Any) -> Any:
    """Implementation of ``lax.bessel_i0e`` / ``special.i0e``."""
    return _sm._in_float32(_i0e_rule, _float(x))


def bessel_i1e(x: Any) -> Any:
    """Implementation of ``lax.bessel_i1e`` / ``special.i1e``."""
    return _sm._in_float32(_i1e_rule, _float(x))


def i0(x: Any) -> Any:
    """Implementation of ``special.i0``: ``exp(|x|) i0e(x)``."""
    x = _float(x)
    return _bnp().exp(_bnp().abs(x)) * bessel_i0e(x)


def i1(x: Any) -> Any:
    """Implementation of ``special.i1``: ``exp(|x|) i1e(x)``."""
    x = _float(x)
    return _bnp().exp(_bnp().abs(x)) * bessel_i1e(x)


def bessel_jn(z: Any, *, v: int, n_iter: int) -> Any:
    """Implementation of ``special.bessel_jn``: ``J_0 .. J_v`` at z,
    stacked on a new leading axis."""
    bnp = _bnp()
    z = _float(z)
    f0 = z * 0.0
    f1 = f0 + 1e-16
    bs = f0
    vals: dict[int, Any] = {}
    for k in range(n_iter, -1, -1):
        f = 2.0 * (k + 1.0) * f1 / z - f0
        if k % 2 == 0:
            bs = bs + 2.0 * f
        f0, f1 = f1, f
        if k <= v:
            vals[k] = f
    norm = bs - vals[0]
    return bnp.stack([vals[k] / norm for k in range(v + 1)], axis=0)


# ---- zeta and polygamma ----


def _zeta_f(x: Any, q: Any) -> Any:
    bnp = _bnp()
    eps = float(np.finfo(np.dtype(x.dtype)).eps)
    a = q
    initial = bnp.power(q, -x)
    for _ in range(9):
        a = a + 1.0
        initial = initial + bnp.power(a, -x)
    a = a + 1.0
    neg_power = bnp.power(a, -x)
    s = initial + neg_power * a / (x - 1.0)
    a_inv_sq = 1.0 / (a * a)
    horner = x * 0.0
    for i in range(11):
        factor = (x + (22.0 - 2.0 * i)) * (x + (21.0 - 2.0 * i))
        horner = factor * a_inv_sq * (horner + 1.0 / _ZETA_COEFFS[i])
    s = s + neg_power * (0.5 + x / a * (1.0 / _ZETA_COEFFS[11] + horner))
    out = bnp.where(bnp.abs(neg_power) < bnp.abs(initial) * eps, initial, s)
    out = bnp.where(x == 1.0, np.inf, out)
    out = bnp.where(x < 1.0, np.nan, out)
    out = bnp.where((q <= 0.0) & (x != bnp.floor(x)), np.nan, out)
    at_pole = (q <= 0.0) & (q == bnp.floor(q))
    even = (bnp.fmod(x, 2.0) == 0.0) & (x == bnp.floor(x))
    return bnp.where(at_pole, bnp.where(even, np.inf, np.nan), out)


def _zeta_series(s: Any, a: Any) -> Any:
    """JAX's series for zeta's derivatives (Johansson 2015, formula 5),
    with N = M = 8 (float32) or 16 (float64) terms."""
    bnp = _bnp()
    n = 8 if np.dtype(s.dtype) != np.float64 else 16
    out = s * 0.0
    for k in range(n):
        out = out + bnp.power(a + float(k), -s)
    out = out + bnp.power(a + n, 1.0 - s) / (s - 1.0)
    t0 = bnp.power(a + n, -s)
    big = float(np.finfo(np.dtype(s.dtype)).max)
    prod = s * 0.0 + 1.0
    t1 = s * 0.0
    for m in range(2 * n):
        prod = prod * ((s + float(m)) / (a + n))
        if m % 2 == 0:
            t1 = t1 + bnp.minimum(prod, big) / float(_BERNOULLI_COEFS[m // 2])
    return out + t0 * (0.5 + t1)


@custom_jvp
def _zeta_rule(x: Any, q: Any) -> Any:
    return _zeta_f(x, q)


@_zeta_rule.defjvp
def _zeta_jvp(primals: Any, tangents: Any) -> Any:
    # As JAX: the derivative of the series (5) of Johansson (2015).
    from baton._autodiff import jvp

    return _zeta_rule(*primals), jvp(_zeta_series, primals, tangents)[1]


def _upcast2(fn: Any, x: Any, q: Any) -> Any:
    bnp = _bnp()
    x, q = bnp.broadcast_arrays(*_ops.promote(_float(x), _float(q)))
    d = np.dtype(x.dtype)
    if d == np.float32 or d == np.float64:
        return fn(x, q)
    return fn(x.astype(np.float32), q.astype(np.float32)).astype(d)


def zeta(x: Any, q: Any) -> Any:
    """Implementation of ``lax.zeta`` / ``special.zeta``: the Hurwitz zeta
    function ``sum_n (n + q)^-x``."""
    return _upcast2(_zeta_rule, x, q)


def _polygamma_f(n: Any, x: Any) -> Any:
    bnp = _bnp()
    sign = 2.0 * bnp.fmod(n, 2.0) - 1.0
    n1 = n + 1.0
    out = bnp.where(
        n == 0.0,
        _sg._digamma_f(x),
        sign * bnp.exp(_sm._gammaln_f32(n1)) * _zeta_rule(n1, x),
    )
    return bnp.where((n != bnp.floor(n)) | (n < 0.0), np.nan, out)


@custom_jvp
def _polygamma_rule(n: Any, x: Any) -> Any:
    return _polygamma_f(n, x)


@_polygamma_rule.defjvp
def _polygamma_jvp(primals: Any, tangents: Any) -> Any:
    (n, x), (tn, tx) = primals, tangents
    # No derivative in n (JAX raises): NaN, never a silent zero.
    return _polygamma_rule(n, x), tx * _polygamma_rule(n + 1.0, x) + nan_tangent(tn)


def polygamma(n: Any, x: Any) -> Any:
    """Implementation of ``lax.polygamma`` / ``special.polygamma``."""
    return _upcast2(_polygamma_rule, n, x)


def _bernoulli_numbers(n: int) -> list[Any]:
    """B_0 .. B_n exactly (Akiyama-Tanigawa), as Fractions."""
    from fractions import Fraction

    a = [Fraction(0)] * (n + 1)
    out = []
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    # Akiyama-Tanigawa gives B_1 = +1/2; scipy's convention is -1/2.
    if n >= 1:
        out[1] = -out[1]
    return out


# (2k)! / B_2k for k = 1 .. 32 (the series of zeta's derivative).
_BERNOULLI_COEFS = [
    math.factorial(2 * k) / float(b)
    for k, b in zip(range(1, 33), _bernoulli_numbers(64)[2::2])
]
