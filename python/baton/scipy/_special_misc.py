"""Combinatorial and hypergeometric special functions as compositions of
baton's ops (implementations run on Tracers; ``baton.scipy.special``
wraps them): ``bernoulli``, ``comb``, ``poch``, ``hyp1f1``, ``owens_t``.

The algorithms are JAX's (``jax/_src/scipy/special.py``):

- ``bernoulli(n)``: 1, -1/2, 1/6, then ``B_2k`` from the zeta series
  ``2 (2k)! / (2 pi)^2k * (1 + sum_{j=2}^{49} j^-2k)`` (0 at odd indices).
- ``comb`` and ``poch``: through ``gammaln`` / ``gamma``.
- ``hyp1f1(a, b, x)``: Kummer's power series for ``|x| < 100``, else the
  asymptotic series for large ``x``; each stops when its terms fall below
  the dtype's epsilon (250 terms at most); JAX's values at ``a == 0``,
  ``a == b`` and ``b == 0``, and its derivatives (series in ``a`` and
  ``b``, ``a/b * 1F1(a+1, b+1, x)`` in ``x``).
- ``owens_t(h, a)``: a 13-point Gauss-Legendre rule on ``|a| <= 1`` (the
  reduction ``T(h, a) = (Phi(h) + Phi(ah))/2 - Phi(h)Phi(ah) - T(ah, 1/a)``
  above), with the closed forms at ``h == 0`` and ``a == 1``.
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


def _lax() -> Any:
    from baton import _control_flow as lax

    return lax


def _promoted(*xs: Any) -> list[Any]:
    return _bnp().broadcast_arrays(*_ops.promote(*(_float(x) for x in xs)))


def bernoulli_values(n: int) -> np.ndarray:
    """``B_0 .. B_n`` as JAX computes them, in float32."""
    f = np.float32
    b3 = np.array([1.0, -0.5, 1.0 / 6.0], f)
    if n < 3:
        return b3[: n + 1]
    bn = np.zeros(n + 1, f)
    bn[:3] = b3
    m = np.arange(4, n + 1, 2, dtype=f)
    pi2 = f(np.pi) ** 2
    q1 = f(1.0) / pi2 * np.cumprod(-(m - 1) * m / f(4) / pi2, dtype=f)
    k = np.arange(2, 50, dtype=f)
    with np.errstate(over="ignore", under="ignore"):
        q2 = np.sum(k[:, None] ** (-m[None, :]), axis=0, dtype=f)
        bn[4::2] = q1 * (1 + q2)
    return bn


def comb(n: Any, k: Any, *, repetition: bool) -> Any:
    """Implementation of ``special.comb`` (float, through gammaln)."""
    bnp = _bnp()
    n, k = _ops.promote(_float(n), _float(k))
    if repetition:
        out = comb(n + k - 1.0, k, repetition=False)
        return bnp.where((k == 0.0) & (n >= 0.0), 1.0, out)
    ok = (k <= n) & (n >= 0.0) & (k >= 0.0)
    sn = bnp.where(ok, n, 0.0)
    sk = bnp.where(ok, k, 0.0)
    g = _sm._gammaln_impl
    out = bnp.exp(g(sn + 1.0) - g(sk + 1.0) - g(sn + 1.0 - sk))
    return bnp.where(ok, out, 0.0)


def _poch_f(z: Any, m: Any) -> Any:
    bnp = _bnp()
    return bnp.where(m == 0.0, 1.0, _sg.gamma(z + m) / _sg.gamma(z))


@custom_jvp
def _poch_rule(z: Any, m: Any) -> Any:
    return _poch_f(z, m)


@_poch_rule.defjvp
def _poch_jvp(primals: Any, tangents: Any) -> Any:
    (z, m), (tz, tm) = primals, tangents
    p = _poch_rule(z, m)
    dzm = _sg.digamma(z + m)
    return p, (dzm - _sg.digamma(z)) * p * tz + dzm * p * tm


def poch(z: Any, m: Any) -> Any:
    """Implementation of ``special.poch``: ``Gamma(z + m) / Gamma(z)``."""
    return _poch_rule(*_ops.promote(_float(z), _float(m)))


# ---- hyp1f1 ----


def _masked_series(init_serie: Any, init_term: Any, step: Any, add: Any) -> Any:
    """JAX's ``while k < 250 and |term| / |serie| > eps: serie += add(term,
    k); term *= step(k); k += 1``, per element (a converged element stops
    changing)."""
    bnp = _bnp()
    eps = float(np.finfo(np.dtype(init_term.dtype)).eps)

    def active(serie: Any, term: Any, k: Any) -> Any:
        return (k < 250.0) & (bnp.abs(term) / bnp.abs(serie) > eps)

    def cond(v: Any) -> Any:
        return bnp.any(active(*v))

    def body(v: Any) -> Any:
        serie, term, k = v
        on = active(serie, term, k)
        serie2 = bnp.where(on, serie + add(term, k), serie)
        term2 = bnp.where(on, term * step(k), term)
        return serie2, term2, k + 1.0

    k0 = bnp.ones((), init_term.dtype)
    return _lax().while_loop(cond, body, (init_serie, init_term, k0))[0]


def _hyp1f1_value(a: Any, b: Any, x: Any) -> Any:
    bnp = _bnp()
    small = bnp.abs(x) < 100.0
    one = bnp.ones_like(x)
    xs = bnp.where(small, x, 0.0)
    serie = _masked_series(
        one,
        a / b * xs,
        lambda k: (a + k) / (b + k) * xs / (k + 1.0),
        lambda t, k: t,
    )
    xl = bnp.where(small, 200.0, x)
    asym = _masked_series(
        one,
        (b - a) * (1.0 - a) / xl,
        lambda k: (b - a + k) * (1.0 - a + k) / (k + 1.0) / xl,
        lambda t, k: t,
    )
    asym = _sg.gamma(b) / _sg.gamma(a) * bnp.exp(xl) * bnp.power(xl, a - b) * asym
    out = bnp.where(small, serie, asym)
    out = bnp.where((b == 0.0) & (a != 0.0), np.inf, out)
    out = bnp.where((a == b) & (a != 0.0), bnp.exp(x), out)
    return bnp.where(a == 0.0, 1.0, out)


def _hyp1f1_da(a: Any, b: Any, x: Any) -> Any:
    bnp = _bnp()
    dga = _sg.digamma(a)
    return _masked_series(
        bnp.zeros_like(x),
        a / b * x,
        lambda k: (a + k) / (b + k) * x / (k + 1.0),
        lambda t, k: t * (_sg.digamma(a + k) - dga),
    )


def _hyp1f1_db(a: Any, b: Any, x: Any) -> Any:
    bnp = _bnp()
    dgb = _sg.digamma(b)
    return _masked_series(
        bnp.zeros_like(x),
        a / b * x,
        lambda k: (a + k) / (b + k) * x / (k + 1.0),
        lambda t, k: t * (dgb - _sg.digamma(b + k)),
    )


@custom_jvp
def _hyp1f1_rule(a: Any, b: Any, x: Any) -> Any:
    return _hyp1f1_value(a, b, x)


@_hyp1f1_rule.defjvp
def _hyp1f1_jvp(primals: Any, tangents: Any) -> Any:
    (a, b, x), (ta, tb, tx) = primals, tangents
    out = _hyp1f1_rule(a, b, x)
    dx = a / b * _hyp1f1_rule(a + 1.0, b + 1.0, x)
    return out, _hyp1f1_da(a, b, x) * ta + _hyp1f1_db(a, b, x) * tb + dx * tx


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Implementation of ``special.hyp1f1``: Kummer's confluent
    hypergeometric function ``1F1(a; b; x)``."""
    a, b, x = _promoted(a, b, x)
    d = np.dtype(x.dtype)
    if d == np.float32 or d == np.float64:
        return _hyp1f1_rule(a, b, x)
    f = np.float32
    return _hyp1f1_rule(a.astype(f), b.astype(f), x.astype(f)).astype(d)


# ---- owens_t ----

_OWENS_T_PTS = (
    0.0035082039676451716, 0.031279042338030756, 0.08526682628321945,
    0.16245071730812277, 0.25851196049125436, 0.3680755384069753,
    0.485010929056047, 0.6027751415261857, 0.7147788421775323,
    0.814755109887601, 0.8971102975594897, 0.9572380808594426,
    0.991788329746297,
)  # fmt: skip
_OWENS_T_WTS = (
    0.018831438115323503, 0.01856708624397765, 0.018042093461223385,
    0.017263829606398752, 0.016243219975989858, 0.014994592034116705,
    0.013535474469662087, 0.011886351605820165, 0.010070377242777432,
    0.008113054574229958, 0.006041900952847024, 0.0038862217010742057,
    0.001679303108454609,
)  # fmt: skip


def _owens_t_f(h: Any, a: Any) -> Any:
    bnp = _bnp()
    erf, erfc = _sm._erf, _sm._erfc
    h = bnp.abs(h)
    abs_a = bnp.abs(a)
    root2 = math.sqrt(2.0)
    hn = h / root2
    inner = abs_a <= 1.0
    safe_abs_a = bnp.where(abs_a == 0.0, 1.0, abs_a)
    ma = bnp.where(inner, abs_a, 1.0 / safe_abs_a)
    mh = bnp.where(inner, h, abs_a * h)
    quad = ma * 0.0
    a2, h2 = ma * ma, mh * mh
    for p, w in zip(_OWENS_T_PTS, _OWENS_T_WTS):
        r = a2 * p
        quad = quad + w * (bnp.exp(-0.5 * h2 * (1.0 + r)) / (1.0 + r))
    out = ma * quad
    out = bnp.where(mh == 0.0, bnp.arctan(ma) / (2.0 * math.pi), out)
    out = bnp.where(
        ma == 1.0, 0.125 * erfc(-mh / root2) * erfc(mh / root2), out
    )
    normh = erfc(hn)
    normah = erfc(abs_a * hn)
    outer = bnp.where(
        abs_a * h <= 0.67,
        0.25 - 0.25 * erf(hn) * erf(abs_a * hn) - out,
        0.25 * (normh + normah - normh * normah) - out,
    )
    out = bnp.where(abs_a > 1.0, outer, out)
    out = bnp.sign(a) * out
    return bnp.where(bnp.isnan(a) | bnp.isnan(h), np.nan, out)


@custom_jvp
def _owens_t_rule(h: Any, a: Any) -> Any:
    return _owens_t_f(h, a)


@_owens_t_rule.defjvp
def _owens_t_jvp(primals: Any, tangents: Any) -> Any:
    (h, a), (th, ta) = primals, tangents
    bnp = _bnp()
    root2 = math.sqrt(2.0)
    dh = (
        -bnp.exp(-0.5 * h * h)
        * _sm._erf(a * h / root2)
        / (2.0 * math.sqrt(2.0 * math.pi))
    )
    da = bnp.exp(-0.5 * (a * a + 1.0) * h * h) / (2.0 * math.pi * (a * a + 1.0))
    return _owens_t_rule(h, a), dh * th + da * ta


def owens_t(h: Any, a: Any) -> Any:
    """Implementation of ``special.owens_t``: Owen's T function."""
    h, a = _promoted(h, a)
    return _sm._in_float32(lambda t: _owens_t_rule(t, a.astype(t.dtype)), h)
