"""Combinatorial and hypergeometric special functions as compositions of
baton's ops (implementations run on Tracers; ``baton.scipy.special``
wraps them): ``bernoulli``, ``comb``, ``poch``, ``hyp1f1``, ``hyp2f1``,
``owens_t``.

The algorithms are JAX's (``jax/_src/scipy/special.py``):

- ``bernoulli(n)``: 1, -1/2, 1/6, then ``B_2k`` from the zeta series
  ``2 (2k)! / (2 pi)^2k * (1 + sum_{j=2}^{49} j^-2k)`` (0 at odd indices).
- ``comb`` and ``poch``: through ``gammaln`` / ``gamma``.
- ``hyp1f1(a, b, x)``: Kummer's power series for ``|x| < 100``, else the
  asymptotic series for large ``x``; each stops when its terms fall below
  the dtype's epsilon (250 terms at most); JAX's values at ``a == 0``,
  ``a == b`` and ``b == 0``, and its derivatives (series in ``a`` and
  ``b``, ``a/b * 1F1(a+1, b+1, x)`` in ``x``).
- ``hyp2f1(a, b, c, x)``: JAX's cases (closed forms at ``x == 0``,
  ``x == 1``, ``a == c``, ``b == c``, poles at non-positive integer ``c``),
  the Euler transformation for ``c - a - b <= -1``, and for the rest the
  power series, the terminating sum for non-positive integer ``a`` or
  ``b``, or near ``x = 1`` with integer ``c - a - b`` the digamma
  transformation (Cephes' ``hys2f1``); each loop runs where its case is
  selected. Derivatives: the parameter series and ``ab/c 2F1(a+1, b+1;
  c+1; x)``.
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
    0.0035082039676451716,
    0.031279042338030756,
    0.08526682628321945,
    0.16245071730812277,
    0.25851196049125436,
    0.3680755384069753,
    0.485010929056047,
    0.6027751415261857,
    0.7147788421775323,
    0.814755109887601,
    0.8971102975594897,
    0.9572380808594426,
    0.991788329746297,
)
_OWENS_T_WTS = (
    0.018831438115323503,
    0.01856708624397765,
    0.018042093461223385,
    0.017263829606398752,
    0.016243219975989858,
    0.014994592034116705,
    0.013535474469662087,
    0.011886351605820165,
    0.010070377242777432,
    0.008113054574229958,
    0.006041900952847024,
    0.0038862217010742057,
    0.001679303108454609,
)


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
    out = bnp.where(ma == 1.0, 0.125 * erfc(-mh / root2) * erfc(mh / root2), out)
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


# ---- hyp2f1 ----


def _fmask_loop(cond_fn: Any, body_fn: Any, init: tuple, t0: float) -> tuple:
    """``while any(cond_fn(t, *state)): state = body_fn(t, *state)`` where
    cond_fn holds, per element; ``t`` (the step, shared by the running
    elements) starts at ``t0``."""
    bnp = _bnp()
    dt = init[0].dtype

    def cond(v: Any) -> Any:
        return bnp.any(cond_fn(v[0], *v[1:]))

    def body(v: Any) -> Any:
        t, *state = v
        on = cond_fn(t, *state)
        new = body_fn(t, *state)
        return (t + 1.0, *(bnp.where(on, n, o) for n, o in zip(new, state)))

    return _lax().while_loop(cond, body, (bnp.full((), t0, dt), *init))[1:]


def _hyp2f1_serie(a: Any, b: Any, c: Any, x: Any, on: Any) -> Any:
    bnp = _bnp()
    rtol = float(np.finfo(np.dtype(x.dtype)).eps)
    zero, one = bnp.zeros_like(x), bnp.ones_like(x)

    def cond(k: Any, serie: Any, term: Any) -> Any:
        return on & (k < 250.0) & (bnp.abs(term) > rtol * bnp.abs(serie))

    def body(k: Any, serie: Any, term: Any) -> tuple:
        return serie + term, term * (
            (a + k - 1.0) * (b + k - 1.0) / (c + k - 1.0) / k * x
        )

    return _fmask_loop(cond, body, (zero, one), 1.0)[0]


def _hyp2f1_terminal(a: Any, b: Any, c: Any, x: Any, on: Any) -> Any:
    bnp = _bnp()
    eps = float(np.finfo(np.dtype(x.dtype)).eps) * 50
    ib = bnp.round(b)
    c_int = bnp.floor(c) == c
    mask = (b < a) & (bnp.abs(b - ib) < eps) & ~(c_int & (c <= 0.0) & (c > b))
    a, b = bnp.where(mask, b, a), bnp.where(mask, a, b)
    a = bnp.where(on, bnp.abs(a), 0.0)
    one = bnp.ones_like(x)

    def cond(i: Any, serie: Any, term: Any) -> Any:
        return on & (i < a + 1.0)

    def body(i: Any, serie: Any, term: Any) -> tuple:
        term2 = term * (-(a - i + 1.0) / (c + i - 1.0) * (b + i - 1.0) / i * x)
        return serie + term2, term2

    return _fmask_loop(cond, body, (one, one), 1.0)[0]


def _hyp2f1_digamma_transform(a: Any, b: Any, c: Any, x: Any, on: Any) -> Any:
    bnp = _bnp()
    dg, gm = _sg.digamma, _sg.gamma
    rtol = float(np.finfo(np.dtype(x.dtype)).eps)
    d = c - a - b
    s = 1.0 - x
    rd = bnp.round(d)
    pos = rd >= 0
    e = bnp.where(pos, d, -d)
    d1 = bnp.where(pos, d, 0.0)
    d2 = bnp.where(pos, 0.0, d)
    ard = bnp.where(on, bnp.where(pos, rd, -rd), 0.0)
    ax = bnp.log(s)
    y = dg(bnp.ones_like(x)) + dg(1.0 + e) - dg(a + d1) - dg(b + d1) - ax
    y = y / gm(e + 1.0)
    p = (a + d1) * (b + d1) * s / gm(e + 2.0)

    def cond(t: Any, p: Any, q: Any, y: Any) -> Any:
        return on & (t < 250.0) & (bnp.abs(q) >= rtol * bnp.abs(y))

    def body(t: Any, p: Any, q: Any, y: Any) -> tuple:
        r = dg(1.0 + t) + dg(1.0 + t + e) - dg(a + t + d1) - dg(b + t + d1) - ax
        q2 = p * r
        p2 = p * (s * (a + t + d1) / (t + 1.0))
        p2 = p2 * ((b + t + d1) / (t + 1.0 + e))
        return p2, q2, y + q2

    _, _, y = _fmask_loop(cond, body, (p, y, y), 1.0)

    # The finite sum of the transformation, over i = 1 .. ard - 1.
    def fcond(i: Any, p: Any, t: Any, y1: Any) -> Any:
        return on & (i < ard)

    def fbody(i: Any, p: Any, t: Any, y1: Any) -> tuple:
        r = 1.0 - e + t
        p2 = p * (s * (a + t + d2) * (b + t + d2) / r)
        t2 = t + 1.0
        p2 = p2 / t2
        return p2, t2, y1 + p2

    one = bnp.ones_like(x)
    _, _, y1 = _fmask_loop(fcond, fbody, (one, one * 0.0, one), 1.0)
    gc = gm(c)
    y1 = y1 * (gm(e) * gc / (gm(a + d1) * gm(b + d1)))
    ys = y * (gc / (gm(a + d2) * gm(b + d2)))
    odd = bnp.fmod(ard, 2.0) != 0.0
    ys = bnp.where(odd, -ys, ys)
    q = bnp.power(s, rd)
    summed = bnp.where(rd > 0, ys * q + y1, ys + y1 * q)
    return bnp.where(rd == 0, y * gc / (gm(a) * gm(b)), summed)


def _hyp2f1_terminal_or_serie(a: Any, b: Any, c: Any, x: Any, on: Any) -> Any:
    bnp = _bnp()
    eps = float(np.finfo(np.dtype(x.dtype)).eps) * 50
    d = c - a - b
    neg_int_a = (a <= 0.0) & (bnp.abs(a - bnp.round(a)) < eps)
    neg_int_b = (b <= 0.0) & (bnp.abs(b - bnp.round(b)) < eps)
    neg_int = neg_int_a | neg_int_b
    near_int_d = bnp.abs(d - bnp.round(d)) < eps
    use_transform = (x > 0.9) & ~neg_int & near_int_d
    use_terminal = ~((x > 0.9) & ~neg_int) & neg_int
    serie = _hyp2f1_serie(a, b, c, x, on & ~use_transform & ~use_terminal)
    transform = _hyp2f1_digamma_transform(a, b, c, x, on & use_transform)
    terminal = _hyp2f1_terminal(a, b, c, x, on & use_terminal)
    return bnp.where(use_terminal, terminal, bnp.where(use_transform, transform, serie))


def _hyp2f1_value(a: Any, b: Any, c: Any, x: Any) -> Any:
    bnp = _bnp()
    gm = _sg.gamma
    eps = float(np.finfo(np.dtype(x.dtype)).eps) * 50
    d = c - a - b
    s = 1.0 - x
    ca, cb = c - a, c - b
    c_int = bnp.floor(c) == c
    # JAX's case index, the first test that holds.
    cases = [
        (x == 0.0) | (((a == 0.0) | (b == 0.0)) & (c != 0.0)),
        (c == 0.0) | ((c < 0.0) & c_int),
        (d <= -1.0) & ~((bnp.abs(d - bnp.round(d)) >= eps) & (s < 0.0)),
        (d <= 0.0) & (x == 1.0),
        (x < 1.0) & (b == c),
        (x < 1.0) & (a == c),
        x > 1.0,
        x == 1.0,
    ]
    codes = [0, 1, 2, 1, 3, 4, 1, 5]
    index = bnp.full(x.shape, 6, np.int32)
    for cond, code in reversed(list(zip(cases, codes))):
        index = bnp.where(cond, code, index)
    values = [
        bnp.ones_like(x),
        bnp.full_like(x, np.inf),
        bnp.power(s, d) * _hyp2f1_terminal_or_serie(ca, cb, c, x, index == 2),
        bnp.power(s, -a),
        bnp.power(s, -b),
        gm(c) * gm(d) / (gm(ca) * gm(cb)),
        _hyp2f1_terminal_or_serie(a, b, c, x, index == 6),
    ]
    out = values[0]
    for code in range(1, 7):
        out = bnp.where(index == code, values[code], out)
    return out


def _hyp2f1_dparam(a: Any, b: Any, c: Any, x: Any, which: str) -> Any:
    bnp = _bnp()
    dg = _sg.digamma
    base = {"a": a, "b": b, "c": c}[which]
    d0 = dg(base)
    if which == "c":
        add = lambda t, k: t * (d0 - dg(c + k))  # noqa: E731
    else:
        add = lambda t, k: t * (dg(base + k) - d0)  # noqa: E731
    return _masked_series(
        bnp.zeros_like(x),
        a * b / c * x,
        lambda k: (a + k) * (b + k) / (c + k) / (k + 1.0) * x,
        add,
    )


@custom_jvp
def _hyp2f1_rule(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_value(a, b, c, x)


@_hyp2f1_rule.defjvp
def _hyp2f1_jvp(primals: Any, tangents: Any) -> Any:
    (a, b, c, x), (ta, tb, tc, tx) = primals, tangents
    out = _hyp2f1_rule(a, b, c, x)
    dx = a * b / c * _hyp2f1_rule(a + 1.0, b + 1.0, c + 1.0, x)
    tan = (
        _hyp2f1_dparam(a, b, c, x, "a") * ta
        + _hyp2f1_dparam(a, b, c, x, "b") * tb
        + _hyp2f1_dparam(a, b, c, x, "c") * tc
        + dx * tx
    )
    return out, tan


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Implementation of ``special.hyp2f1``: Gauss' hypergeometric
    function ``2F1(a, b; c; x)``."""
    a, b, c, x = _promoted(a, b, c, x)
    d = np.dtype(x.dtype)
    if d == np.float32 or d == np.float64:
        return _hyp2f1_rule(a, b, c, x)
    f = np.float32
    return _hyp2f1_rule(a.astype(f), b.astype(f), c.astype(f), x.astype(f)).astype(d)
